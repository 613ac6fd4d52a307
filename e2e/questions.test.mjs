// End-to-end tests of an MCP server's questions (its elicitation during a
// tool call the agent makes) in each editor face of the real zero binary,
// driven by each protocol's own client library: the question reaches the
// person the way the face asks, and the answer reaches the server, whose
// tool result reaches the model. The server is asking-mcp-server.mjs (the
// MCP SDK's own server), configured for the agent as the stdio server
// "bookings".
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { client as acpClient, ndJsonStream, methods } from "@agentclientprotocol/sdk";
import rpc from "vscode-jsonrpc/node";
import { ZERO_BIN, tempDir, toolReply, answer, startModel, spawnZero, zeroEnv } from "./lib.mjs";
import { SERVER_PATH, BOOK_MESSAGE } from "./asking-mcp-server.mjs";

const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = rpc;

// A backstop only: every wait below is on a protocol message, and a test
// whose message never comes fails here instead of holding the runner.
const LIMIT = { timeout: 90000 };

/**
 * A list to await: next(pred) resolves with the first item, come already
 * or to come, that pred accepts.
 */
class Feed {
  items = [];
  #waiting = [];
  push(x) {
    this.items.push(x);
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const w of waiting) {
      if (w.pred(x)) w.resolve(x);
      else this.#waiting.push(w);
    }
  }
  next(pred) {
    const found = this.items.find(pred);
    return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => this.#waiting.push({ pred, resolve }));
  }
}

/** The environment naming the bookings server for the agent (a config.yaml of its own). */
function bookingsEnv(t) {
  const config = tempDir(t, "zero-config-");
  mkdirSync(join(config, "zero"));
  writeFileSync(join(config, "zero", "config.yaml"),
    `mcp_servers:\n  bookings:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SERVER_PATH)}]\n`);
  return { XDG_CONFIG_HOME: config };
}

// How a tool's result reads in the transcript the model is sent.
const result = (text) => `"tool_result": ${JSON.stringify(text)}`;

/**
 * The scripted model of one question: on prompt it calls the bookings
 * tool, and it answers reply only once the tool's result reads said. The
 * server's question is never the model's to see: a request holding it gets
 * a reply that fails the test.
 */
function model(t, prompt, tool, said, reply) {
  return startModel(t, [
    { match: BOOK_MESSAGE, content: answer("LEAK: the server's question reached the model") },
    { match: "Confirm the booking?", content: answer("LEAK: the server's question reached the model") },
    { match: prompt, content: toolReply(`ask the bookings server (${tool})`, `bookings.${tool}`, {}) },
    { match: result(said), content: answer(reply) },
  ]);
}

// ---- MCP: zero mcp, the MCP SDK's client asked with elicitation/create ----

/** The MCP SDK's client on `zero mcp`, declaring elicitation; closed when the test ends. */
async function mcpClient(t, url, onElicit) {
  const transport = new StdioClientTransport({ command: ZERO_BIN, args: ["mcp"], env: zeroEnv(t, url, bookingsEnv(t)), stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d) => { stderr += d; });
  const c = new Client({ name: "e2e-questions", version: "1" }, { capabilities: { elicitation: {} } });
  c.setRequestHandler(ElicitRequestSchema, onElicit);
  t.after(() => c.close());
  await c.connect(transport);
  c.stderrText = () => stderr;
  return c;
}

async function zeroRun(t, c, message) {
  const res = await c.callTool({ name: "zero_run", arguments: { message, workspace: tempDir(t) } });
  assert.ok(!res.isError, `zero_run failed: ${JSON.stringify(res.content)}\n${c.stderrText()}`);
  return res.structuredContent;
}

test("mcp: the server's form reaches the client as elicitation/create; the answer, completed with the defaults, reaches the server", LIMIT, async (t) => {
  const url = await model(t, "book a table", "book", "booked for Ada, 2 seats (window: undefined)", "the table is booked for Ada");
  const asked = [];
  const c = await mcpClient(t, url, (req) => {
    asked.push(req.params);
    return { action: "accept", content: { name: "Ada" } };
  });
  const out = await zeroRun(t, c, "book a table for tonight");
  assert.equal(out.response, "the table is booked for Ada", c.stderrText());
  assert.equal(asked.length, 1);
  const [p] = asked;
  assert.match(p.message, /bookings/, "the message names the server");
  assert.ok(p.message.includes(BOOK_MESSAGE), `the server's words: ${p.message}`);
  const s = p.requestedSchema;
  assert.equal(s.type, "object");
  assert.deepEqual(Object.keys(s.properties), ["name", "seats", "window"], "the fields in the server's order");
  assert.equal(s.properties.name.type, "string");
  assert.equal(s.properties.seats.type, "integer");
  assert.equal(s.properties.seats.default, 2);
  assert.equal(s.properties.seats.minimum, 1);
  assert.equal(s.properties.seats.maximum, 12);
  assert.equal(s.properties.window.type, "boolean");
  assert.deepEqual(s.required, ["name"]);
  // The session's events say who asked and what became of it, never what was typed.
  const st = await c.callTool({ name: "zero_status", arguments: { session: out.session } });
  const evs = st.structuredContent.events;
  const requested = evs.find((e) => e.type === "question_requested");
  assert.equal(requested?.title, "bookings", JSON.stringify(evs.map((e) => e.type)));
  const resolved = evs.find((e) => e.type === "question_resolved" && e.text === requested.text);
  assert.equal(resolved?.status, "accept");
  assert.ok(!JSON.stringify([requested, resolved]).includes("Ada"), "what the person typed is in no event");
});

test("mcp: a declined form: the server is told no, the run goes on", LIMIT, async (t) => {
  const url = await model(t, "book a table", "book", "declined", "the booking was declined");
  let asked = 0;
  const c = await mcpClient(t, url, () => { asked++; return { action: "decline" }; });
  const out = await zeroRun(t, c, "book a table for tonight");
  assert.equal(out.response, "the booking was declined", c.stderrText());
  assert.equal(asked, 1);
});

// ---- ACP: zero acp, the ACP SDK's client ----

/**
 * `zero acp` with the ACP SDK's client: it records the session's updates,
 * answers session/request_permission with onAsk's option, and, given
 * onElicit, declares that it shows forms and answers elicitation/create
 * with it (else it declares no elicitation).
 */
async function startAcp(t, url, onAsk, onElicit) {
  const ws = tempDir(t);
  const proc = spawnZero(t, ["acp"], { url, env: bookingsEnv(t), cwd: ws });
  const updates = new Feed();
  const asked = new Feed();
  const elicited = [];
  let app = acpClient({ name: "e2e-questions" })
    .onNotification(methods.client.session.update, ({ params }) => { updates.push(params); })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected", optionId: onAsk(params) } };
    });
  if (onElicit) {
    app = app.onRequest(methods.client.elicitation.create, ({ params }) => { elicited.push(params); return onElicit(params); });
  }
  const conn = app.connect(ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  t.after(() => conn.close());
  const clientCapabilities = onElicit ? { elicitation: { form: {} } } : {};
  await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities });
  const s = await conn.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
  const of = () => updates.items.filter((u) => u.sessionId === s.sessionId).map((u) => u.update);
  const prompt = (text) => conn.agent.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text }] });
  return { proc, of, prompt, asked, elicited, sessionId: s.sessionId };
}

const messageText = (us) => us.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
const questionCall = (us) => us.filter((u) => String(u.toolCallId ?? "").startsWith("zero-question-"));

test("acp: a yes-or-no question is asked with session/request_permission; accepting it reaches the server", LIMIT, async (t) => {
  const url = await model(t, "confirm my table", "confirm", "confirmed", "the booking is confirmed");
  const z = await startAcp(t, url, (p) => (p.toolCall.toolCallId.startsWith("zero-question-") ? "accept" : "allow_once"));
  const res = await z.prompt("confirm my table");
  assert.equal(res.stopReason, "end_turn", z.proc.stderrText());
  assert.equal(messageText(z.of()), "the booking is confirmed", z.proc.stderrText());
  assert.equal(z.asked.items.length, 1);
  const [p] = z.asked.items;
  assert.deepEqual(p.options.map((o) => [o.optionId, o.kind]), [["accept", "allow_once"], ["decline", "reject_once"]]);
  const shown = p.toolCall.content.map((c) => c.content?.text ?? "").join("");
  assert.match(shown, /`bookings`/, "the question names the server");
  assert.match(shown, /Confirm the booking\?/, "the server's words");
  // The question is a tool call of its own, pending until answered.
  const calls = questionCall(z.of());
  assert.equal(calls[0].sessionUpdate, "tool_call");
  assert.equal(calls[0].status, "pending");
  assert.equal(calls.at(-1).status, "completed");
  assert.match(calls.at(-1).title, /bookings.*answered/);
});

test("acp: a client choosing an option it was not offered declines the question", LIMIT, async (t) => {
  const url = await model(t, "confirm my table", "confirm", "declined", "the booking was declined");
  const z = await startAcp(t, url, () => "allow_always");
  const res = await z.prompt("confirm my table");
  assert.equal(res.stopReason, "end_turn", z.proc.stderrText());
  assert.equal(z.asked.items.length, 1);
  assert.equal(messageText(z.of()), "the booking was declined", z.proc.stderrText());
});

test("acp: a form that needs typing, and the client shows no forms: declined, the user told which server", LIMIT, async (t) => {
  const url = await model(t, "book a table", "book", "declined", "the booking was declined");
  const z = await startAcp(t, url, () => "allow_once");
  const res = await z.prompt("book a table for tonight");
  assert.equal(res.stopReason, "end_turn", z.proc.stderrText());
  assert.equal(z.asked.items.length, 0, "no buttons for a form to type in");
  const said = messageText(z.of());
  assert.match(said, /The MCP server `bookings` asked you to fill in a form, and `name` must be typed in/);
  assert.ok(said.endsWith("the booking was declined"), said);
  const calls = questionCall(z.of());
  assert.equal(calls.at(-1).status, "failed");
  assert.match(calls.at(-1).title, /bookings.*declined/);
});

// A client that shows forms gets Zero's elicitation/create, for the
// session and the question's tool call (ACP's schema requires the
// session: the SDK's client refuses a request without one).
test("acp: a client that shows forms gets the form with elicitation/create; its answer reaches the server", LIMIT, async (t) => {
  const url = await startModel(t, [
    { match: BOOK_MESSAGE, content: answer("LEAK: the server's question reached the model") },
    { match: "book a table", content: toolReply("ask the bookings server (book)", "bookings.book", {}) },
    { match: result("booked for Ada, 2 seats (window: undefined)"), content: answer("the table is booked for Ada") },
    { match: result("declined"), content: answer("the booking was declined") },
  ]);
  const z = await startAcp(t, url, () => "decline", () => ({ action: "accept", content: { name: "Ada" } }));
  const res = await z.prompt("book a table for tonight");
  assert.equal(res.stopReason, "end_turn");
  const warned = z.proc.stderrText().split("\n").filter((l) => l.includes("elicitation")).join("\n");
  assert.equal(z.elicited.length, 1, `the form was not put to the client: ${warned}`);
  const [p] = z.elicited;
  assert.equal(p.sessionId, z.sessionId);
  assert.match(p.toolCallId ?? "", /^zero-question-/, "the question's own tool call");
  assert.equal(p._meta, undefined, "nothing of Zero's left in _meta");
  assert.equal(p.mode, "form");
  assert.match(p.message, /bookings/);
  assert.ok(p.message.includes(BOOK_MESSAGE), p.message);
  assert.equal(p.requestedSchema.properties.seats.default, 2);
  assert.deepEqual(p.requestedSchema.required, ["name"]);
  assert.equal(messageText(z.of()), "the table is booked for Ada");
});

// ---- LSP: zero lsp, vscode-jsonrpc, as Zero's own view ----

/**
 * `zero lsp` with vscode-jsonrpc. view: initialize as Zero's own view does
 * (initializationOptions {"approvals": "events"}: it answers with
 * zero/answer); else as any editor, asked with window/showMessageRequest
 * (answered with onAsk).
 */
async function startLsp(t, url, { view, onAsk } = {}) {
  const ws = tempDir(t);
  const proc = spawnZero(t, ["lsp"], { url, env: bookingsEnv(t), cwd: ws });
  const events = new Feed();
  const shown = new Feed();
  const asked = [];
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  conn.onNotification("zero/event", (e) => events.push(e));
  conn.onNotification("window/showMessage", (m) => shown.push(m));
  conn.onRequest("window/showMessageRequest", (p) => { asked.push(p); return onAsk ? onAsk(p) : null; });
  conn.listen();
  t.after(() => conn.dispose());
  await conn.sendRequest("initialize", {
    processId: process.pid,
    rootUri: pathToFileURL(ws).href,
    capabilities: { window: { workDoneProgress: false } },
    initializationOptions: view ? { approvals: "events" } : undefined,
  });
  await conn.sendNotification("initialized", {});
  const { sessionId } = await conn.sendRequest("zero/newSession", {});
  const prompt = (message) => conn.sendRequest("zero/prompt", { sessionId, message });
  return { proc, conn, events, shown, asked, prompt, sessionId };
}

test("lsp: Zero's view gets question_requested with the form and answers with zero/answer; the server gets it completed", LIMIT, async (t) => {
  const url = await model(t, "book a table", "book", "booked for Ada, 2 seats (window: undefined)", "the table is booked for Ada");
  const z = await startLsp(t, url, { view: true });
  const run = z.prompt("book a table for tonight");
  const e = await z.events.next((e) => e.type === "question_requested");
  assert.equal(e.session, z.sessionId);
  assert.equal(e.title, "bookings");
  const q = e.question;
  assert.equal(q.id, e.text);
  assert.equal(q.server, "bookings");
  assert.equal(q.message, BOOK_MESSAGE);
  assert.deepEqual(q.fields.map((f) => [f.name, f.type, f.required ?? false, f.default]), [
    ["name", "string", true, undefined],
    ["seats", "integer", false, 2],
    ["window", "boolean", false, undefined],
  ]);
  // Answers the form does not take are refused, naming the field and never
  // the value, and the question still waits.
  const refused = async (content, why) => {
    const err = await z.conn.sendRequest("zero/answer", { id: q.id, action: "accept", content }).then(() => null, (e) => e);
    assert.equal(err?.code, -32602, `${JSON.stringify(content)} was taken`);
    assert.match(err.message, why);
    assert.ok(!err.message.includes("Zed-40"), err.message);
  };
  await refused({ name: "Ada", tables: 3 }, /the form has no field "tables"/);
  await refused({ name: "Zed-40", seats: 40 }, /seats.*at most 12/);
  await refused({ seats: 3 }, /name.*required/);
  assert.equal(await z.conn.sendRequest("zero/answer", { id: q.id, action: "accept", content: { name: "Ada" } }), null);
  const res = await run;
  assert.equal(res.response, "the table is booked for Ada", z.proc.stderrText());
  const resolved = await z.events.next((r) => r.type === "question_resolved" && r.text === q.id);
  assert.equal(resolved.status, "accept");
  assert.ok(!JSON.stringify(resolved).includes("Ada"), "what the person typed is in no event");
  assert.equal(z.asked.length, 0, "Zero's view is not asked with showMessageRequest");
  // The first answer won: a second one finds nothing waiting.
  const late = await z.conn.sendRequest("zero/answer", { id: q.id, action: "decline" }).then(() => null, (e) => e);
  assert.match(late?.message ?? "", /no question "q\d+" is waiting/);
});

test("lsp: another editor is asked a yes or no with showMessageRequest; a form to type in is declined and the user told", LIMIT, async (t) => {
  // A yes or no: Accept.
  {
    const url = await model(t, "confirm my table", "confirm", "confirmed", "the booking is confirmed");
    const z = await startLsp(t, url, { onAsk: () => ({ title: "Accept" }) });
    const res = await z.prompt("confirm my table");
    assert.equal(res.response, "the booking is confirmed", z.proc.stderrText());
    assert.equal(z.asked.length, 1);
    assert.match(z.asked[0].message, /the MCP server "bookings" asks: Confirm the booking\?/);
    assert.deepEqual(z.asked[0].actions.map((a) => a.title), ["Accept", "Decline"]);
  }
  // A form with a required field: no buttons can fill it in.
  {
    const url = await model(t, "book a table", "book", "declined", "the booking was declined");
    const z = await startLsp(t, url, { onAsk: () => ({ title: "Accept" }) });
    const res = await z.prompt("book a table for tonight");
    assert.equal(res.response, "the booking was declined", z.proc.stderrText());
    assert.equal(z.asked.length, 0);
    const m = await z.shown.next((m) => /bookings/.test(m.message));
    assert.match(m.message, /the MCP server "bookings" asked a question this editor cannot show \(a form with fields to fill in: name\), so it was declined/);
  }
});
