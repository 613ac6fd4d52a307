// Issue 27 through the real `zero acp`, driven by @agentclientprotocol/sdk
// (its unstable entry point, which knows session/fork): a run changes the
// workspace with text_editor and with a command, /undo puts every file
// back on disk, a file the user changed since is asked about with
// session/request_permission, and a session forks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream, methods } from "@agentclientprotocol/sdk/unstable";
import { tempDir, answer, startModel, spawnZero, until } from "./lib.mjs";
import { undoReplies, put, seed, listing } from "./undo.mjs";

async function startAcp(t, replies, { onAsk } = {}) {
  const url = await startModel(t, replies);
  const ws = tempDir(t);
  seed(ws);
  const proc = spawnZero(t, ["acp"], { url, cwd: ws });
  const rec = { proc, ws, updates: [], asked: [] };
  const app = client({ name: "zero-e2e-undo" })
    .onNotification(methods.client.session.update, ({ params }) => { rec.updates.push(params); })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      rec.asked.push(params);
      return { outcome: { outcome: "selected", optionId: onAsk ? onAsk(params) : "cancel" } };
    });
  const conn = app.connect(ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  t.after(() => conn.close());
  rec.agent = conn.agent;
  rec.init = await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  rec.of = (id) => rec.updates.filter((u) => u.sessionId === id).map((u) => u.update);
  rec.newSession = async () => {
    const s = await conn.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await until(() => rec.of(s.sessionId).some((u) => u.sessionUpdate === "available_commands_update"), 10000, "commands");
    return s;
  };
  // say sends text and returns the agent's message in answer to it.
  rec.say = async (sessionId, text) => {
    const n = rec.of(sessionId).length;
    const res = await conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    assert.equal(res.stopReason, "end_turn", text);
    return messageText(rec.of(sessionId).slice(n));
  };
  return rec;
}

const messageText = (us) => us.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
const thoughtText = (us) => us.filter((u) => u.sessionUpdate === "agent_thought_chunk").map((u) => u.content.text).join("");

test("/undo puts the workspace back exactly and the run leaves the conversation", async (t) => {
  const z = await startAcp(t, undoReplies);
  const before = listing(z.ws);
  const s = await z.newSession();
  const offered = z.of(s.sessionId).find((u) => u.sessionUpdate === "available_commands_update").availableCommands.map((c) => c.name);
  for (const name of ["undo", "rewind", "compact", "fork"]) assert.ok(offered.includes(name), `${name} offered: ${offered}`);

  assert.equal(await z.say(s.sessionId, "make the mess"), "mess made");
  assert.match(thoughtText(z.of(s.sessionId)), /\(checkpoint 1 before run 1: the conversation and \d+ files/);
  const after = listing(z.ws);
  assert.equal(after["kept.txt"], "changed by the agent\n");
  assert.equal(after["out/made.txt"], "new\n");
  assert.equal(after["gone.txt"], undefined);

  const said = await z.say(s.sessionId, "/undo");
  assert.deepEqual(listing(z.ws), before);
  assert.match(said, /\*\*Rewound\*\* the files and the conversation to checkpoint 1\./);
  assert.match(said, /Restored 2 files: `gone.txt`, `kept.txt`/);
  assert.match(said, /made since: `out\/`, `out\/made.txt`/);
  assert.match(said, /\d+ messages left the conversation/);
  assert.equal(z.asked.length, 0, "nothing changed outside the agent: no question");

  assert.equal(await z.say(s.sessionId, "after the undo"), "fresh");
});

test("a file the user changed is asked about; keep keeps the user's edit", async (t) => {
  const z = await startAcp(t, undoReplies, { onAsk: () => "keep" });
  const s = await z.newSession();
  assert.equal(await z.say(s.sessionId, "make the mess"), "mess made");
  put(z.ws, "kept.txt", "the user fixed it by hand\n");

  const said = await z.say(s.sessionId, "/undo");
  assert.equal(z.asked.length, 1);
  const q = z.asked[0];
  assert.deepEqual(q.options.map((o) => o.optionId), ["keep", "overwrite", "cancel"]);
  assert.match(q.toolCall.title, /kept\.txt/);
  assert.deepEqual(q.toolCall.locations.map((l) => l.path), [join(z.ws, "kept.txt")]);
  assert.ok(z.of(s.sessionId).some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === q.toolCall.toolCallId),
    "the question's tool call was sent before it was asked");

  const ws = listing(z.ws);
  assert.equal(ws["kept.txt"], "the user fixed it by hand\n");
  assert.equal(ws["gone.txt"], "deleted by a command\n");
  assert.equal(ws["out/made.txt"], undefined);
  assert.match(said, /Kept 1 file changed outside the agent: `kept.txt`/);
});

test("session/fork and /fork make sessions that go on on their own", async (t) => {
  const z = await startAcp(t, [
    { match: "fork too", content: answer("second fork answer") },
    { match: "in the fork", content: answer("fork answer") },
    { match: "first question", content: answer("answer one") },
  ]);
  assert.deepEqual(z.init.agentCapabilities.sessionCapabilities.fork, {});
  const s = await z.newSession();
  assert.equal(await z.say(s.sessionId, "first question"), "answer one");

  const f = await z.agent.request(methods.agent.session.fork, { sessionId: s.sessionId, cwd: z.ws, mcpServers: [] });
  assert.ok(f.sessionId && f.sessionId !== s.sessionId);
  assert.ok(f.configOptions.some((o) => o.id === "mode"));
  await until(() => z.of(f.sessionId).some((u) => u.sessionUpdate === "available_commands_update"), 10000, "the fork's commands");
  assert.equal(await z.say(f.sessionId, "in the fork"), "fork answer");
  await assert.rejects(z.agent.request(methods.agent.session.fork, { sessionId: s.sessionId, cwd: tempDir(t), mcpServers: [] }),
    (e) => e.code === -32602);

  const said = await z.say(s.sessionId, "/fork");
  const id = /as a new session: `([^`]+)`/.exec(said)?.[1];
  assert.ok(id, said);
  const n = z.updates.length;
  await z.agent.request(methods.agent.session.load, { sessionId: id, cwd: z.ws, mcpServers: [] });
  const replay = z.updates.slice(n).filter((u) => u.sessionId === id).map((u) => u.update);
  assert.deepEqual(replay.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text), ["first question"]);
  assert.match(thoughtText(replay), new RegExp(`forked from session ${s.sessionId} after run 1`));
  assert.equal(await z.say(id, "in the fork too"), "second fork answer");
});
