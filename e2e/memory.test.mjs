// The agent's memory seen from the three editor faces, with each
// protocol's own client library: a fact saved by `zero run` (memory_save)
// is listed and searched over LSP (zero/memories), MCP (the zero://memories
// resources) and ACP (the /memory command) by other zero processes sharing
// the store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import rpc from "vscode-jsonrpc/node";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { client, ndJsonStream, methods } from "@agentclientprotocol/sdk";
import { ZERO_BIN, tempDir, toolReply, answer, startModel, spawnZero, zeroEnv, until } from "./lib.mjs";

const FACT = "The deploy port of the e2e project is 8443.";

/** A workspace whose memory holds FACT, saved by `zero run` in the store at env.ZERO_STORE. */
async function seeded(t) {
  const url = await startModel(t, [
    { match: "SEED", content: toolReply("saving", "memory_save", { text: FACT, area: "main" }) },
    { match: "Memory saved with id", content: answer("saved") },
  ]);
  const ws = tempDir(t);
  const env = { ZERO_STORE: join(tempDir(t, "zero-store-"), "zero.db") };
  const run = spawnSync(ZERO_BIN, ["run", "--workspace", ws, "SEED the memory"], { env: zeroEnv(t, url, env), encoding: "utf8" });
  assert.equal(run.status, 0, `zero run: ${run.stdout}\n${run.stderr}`);
  return { url, ws, env };
}

test("LSP: zero/memories lists and searches the workspace's memory", async (t) => {
  const { url, ws, env } = await seeded(t);
  const proc = spawnZero(t, ["lsp"], { url, env, cwd: ws });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  conn.listen();
  t.after(() => conn.dispose());
  await conn.sendRequest("initialize", { processId: process.pid, rootUri: pathToFileURL(ws).href, capabilities: {} });
  await conn.sendNotification("initialized", {});

  const all = await conn.sendRequest("zero/memories", {});
  assert.equal(all.memories.length, 1, JSON.stringify(all));
  assert.equal(all.memories[0].text, FACT);
  assert.equal(all.memories[0].scope, "workspace");
  assert.equal(all.memories[0].area, "main");

  const found = await conn.sendRequest("zero/memories", { query: "which deploy port?" });
  assert.equal(found.memories[0]?.text, FACT);
  const other = await conn.sendRequest("zero/memories", { workspace: tempDir(t) });
  assert.deepEqual(other.memories, [], "another workspace sees this one's memory");
  await assert.rejects(conn.sendRequest("zero/memories", { workspace: "relative/path" }), /absolute/);
  await assert.rejects(conn.sendRequest("zero/memories", { limit: "ten" }), /limit/);
});

test("MCP: the zero://memories resource and its search template", async (t) => {
  const { url, ws, env } = await seeded(t);
  const transport = new StdioClientTransport({ command: ZERO_BIN, args: ["mcp", "--workspace", ws], env: zeroEnv(t, url, env), stderr: "pipe" });
  const c = new Client({ name: "e2e", version: "1" }, { capabilities: {} });
  t.after(() => c.close());
  await c.connect(transport);

  const { resources } = await c.listResources();
  assert.ok(resources.some((r) => r.uri === "zero://memories"), JSON.stringify(resources));
  const { resourceTemplates } = await c.listResourceTemplates();
  assert.ok(resourceTemplates.some((r) => r.uriTemplate === "zero://memories/search/{query}"), JSON.stringify(resourceTemplates));

  const list = JSON.parse((await c.readResource({ uri: "zero://memories" })).contents[0].text);
  assert.equal(list.memories[0].text, FACT);
  const search = JSON.parse((await c.readResource({ uri: "zero://memories/search/" + encodeURIComponent("deploy port") })).contents[0].text);
  assert.equal(search.memories[0].text, FACT);
  await assert.rejects(c.readResource({ uri: "zero://memories/elsewhere" }));
});

test("ACP: /memory lists and searches, without a model call", async (t) => {
  const { url, ws, env } = await seeded(t);
  const proc = spawnZero(t, ["acp"], { url, env, cwd: ws });
  const updates = [];
  const app = client({ name: "zero-e2e" }).onNotification(methods.client.session.update, ({ params }) => { updates.push(params); });
  const conn = app.connect(ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  t.after(() => conn.close());
  await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const s = await conn.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
  await until(() => updates.some((u) => u.update.sessionUpdate === "available_commands_update"
    && u.update.availableCommands.some((c) => c.name === "memory")), 10000, "the /memory command");
  const text = () => updates.filter((u) => u.sessionId === s.sessionId && u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => u.update.content.text).join("");
  const res = await conn.agent.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "/memory deploy port" }] });
  assert.equal(res.stopReason, "end_turn");
  await until(() => text().includes("8443"), 5000, "the memory in the reply");
  assert.match(text(), /main, workspace memory/);
});
