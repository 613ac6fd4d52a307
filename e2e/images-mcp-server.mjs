// A stdio MCP server for the end-to-end tests of images (mcp.test.mjs):
// its tool shot answers with a picture, as MCP image content, beside a
// line of text. Run it with node; import it for its constants.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { fileURLToPath } from "node:url";

/** A 3×2 PNG, blue to cyan: small enough for Zero to keep byte for byte. */
export const SHOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAGklEQVR4nGJhYPjPYMPAYMPAxAADgAAAAP//F7sBfqLf65AAAAAASUVORK5CYII=";

/** The path of this file, for a server's configuration. */
export const SERVER_PATH = fileURLToPath(import.meta.url);

// Served only when run (the tests import the constants).
if (process.argv[1] === SERVER_PATH) {
  const server = new McpServer({ name: "pics", version: "1.0.0" });
  server.registerTool("shot", { description: "A screenshot of the app's window." }, async () => ({
    content: [
      { type: "text", text: "the app's window" },
      { type: "image", data: SHOT_PNG, mimeType: "image/png" },
    ],
  }));
  await server.connect(new StdioServerTransport());
}
