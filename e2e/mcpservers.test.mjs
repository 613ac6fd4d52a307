// An ACP editor's MCP servers (session/new mcpServers, as Zed passes the
// user's) join the agent's tools, with the ACP SDK as the client: here the
// server is zero itself (`zero mcp`), and the scripted model calls one of
// its tools through the agent.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Readable, Writable } from "node:stream";
import { once } from "node:events";
import { join } from "node:path";
import { client, ndJsonStream, methods } from "@agentclientprotocol/sdk";
import { ZERO_BIN, tempDir, toolReply, answer, startModel, spawnZero, until } from "./lib.mjs";

test("ACP: the editor's stdio MCP server is used by the agent as server.tool", async (t) => {
  const url = await startModel(t, [
    { match: "MCP-ACP", content: toolReply("list through the server", "inner.zero_sessions", {}) },
    { match: "sessions.", content: answer("listed through MCP") },
  ]);
  const ws = tempDir(t);
  const proc = spawnZero(t, ["acp"], { url, cwd: ws });
  const updates = [];
  const app = client({ name: "zero-e2e" }).onNotification(methods.client.session.update, ({ params }) => { updates.push(params); });
  const conn = app.connect(ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  t.after(() => conn.close());
  const init = await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  assert.equal(init.agentCapabilities.mcpCapabilities?.http, true);
  const s = await conn.agent.request(methods.agent.session.new, {
    cwd: ws,
    mcpServers: [{ name: "inner", command: ZERO_BIN, args: ["mcp"], env: [{ name: "ZERO_STORE", value: "off" }] }],
  });
  const res = await conn.agent.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "MCP-ACP: list the sessions" }] });
  assert.equal(res.stopReason, "end_turn", proc.stderrText());
  const ours = updates.filter((u) => u.sessionId === s.sessionId).map((u) => u.update);
  // The server's answer ("0 sessions.") came back as the tool's output, and
  // the model was only scripted to answer after it.
  const output = ours.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => JSON.stringify(u)).join("");
  assert.match(output, /sessions/, `the MCP tool's result: ${JSON.stringify(ours)}`);
  const said = () => updates.filter((u) => u.sessionId === s.sessionId && u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => u.update.content.text).join("");
  await until(() => said().includes("listed through MCP"), 10000, "the answer");
});

test("ACP: session/load in a new zero process brings the editor's MCP servers back", async (t) => {
  const url = await startModel(t, [
    { match: "FIRST", content: answer("first done") },
    { match: "AGAIN", content: toolReply("list again", "inner.zero_sessions", {}) },
    { match: "sessions.", content: answer("listed after the load") },
  ]);
  const ws = tempDir(t);
  const env = { ZERO_STORE: join(tempDir(t, "zero-store-"), "zero.db") };
  const servers = [{ name: "inner", command: ZERO_BIN, args: ["mcp"], env: [{ name: "ZERO_STORE", value: "off" }] }];
  const connect = async () => {
    const proc = spawnZero(t, ["acp"], { url, env, cwd: ws });
    const updates = [];
    const app = client({ name: "zero-e2e" }).onNotification(methods.client.session.update, ({ params }) => { updates.push(params); });
    const conn = app.connect(ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
    await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    return { proc, conn, updates };
  };
  const one = await connect();
  const s = await one.conn.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: servers });
  await one.conn.agent.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "FIRST" }] });
  one.conn.close();
  one.proc.stdin.end();
  await once(one.proc, "exit");

  const two = await connect();
  t.after(() => two.conn.close());
  await two.conn.agent.request(methods.agent.session.load, { sessionId: s.sessionId, cwd: ws, mcpServers: servers });
  const res = await two.conn.agent.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "AGAIN" }] });
  assert.equal(res.stopReason, "end_turn", two.proc.stderrText());
  const said = () => two.updates.filter((u) => u.sessionId === s.sessionId && u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => u.update.content.text).join("");
  await until(() => said().includes("listed after the load"), 10000, "the answer after the load");
});
