// A stdio MCP server for the end-to-end tests of a server's questions
// (questions.test.mjs, the VS Code e2e): its tool book asks the user, during
// the call, whose name a table is booked under (an elicitation form: name,
// a string, required; seats, an integer, default 2; window, a boolean), and
// its tool confirm asks a plain yes or no. Each answers with what came back.
// Run it with node; import it for its path.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { fileURLToPath } from "node:url";

/** The path of this file, for a server's configuration. */
export const SERVER_PATH = fileURLToPath(import.meta.url);

/** What the book tool asks. */
export const BOOK_MESSAGE = "Which name is the booking under?";

function said(res) {
  if (res.action === "decline") return "declined";
  if (res.action !== "accept") return "cancelled";
  const c = res.content ?? {};
  return `booked for ${c.name}, ${c.seats} seats (window: ${c.window})`;
}

// Served only when run (the tests import the constants).
if (process.argv[1] === SERVER_PATH) {
  const server = new McpServer({ name: "bookings", version: "1.0.0" });
  server.registerTool("book", { description: "Books a table; asks the user whose name it is under." }, async () => {
    const res = await server.server.elicitInput({
      message: BOOK_MESSAGE,
      requestedSchema: {
        type: "object",
        properties: {
          name: { type: "string", title: "Name" },
          seats: { type: "integer", title: "Seats", default: 2, minimum: 1, maximum: 12 },
          window: { type: "boolean", title: "By the window" },
        },
        required: ["name"],
      },
    });
    return { content: [{ type: "text", text: said(res) }] };
  });
  server.registerTool("confirm", { description: "Asks the user to confirm the booking." }, async () => {
    const res = await server.server.elicitInput({
      message: "Confirm the booking?",
      requestedSchema: { type: "object", properties: {} },
    });
    return { content: [{ type: "text", text: res.action === "accept" ? "confirmed" : said(res) }] };
  });
  await server.connect(new StdioServerTransport());
}
