// End-to-end tests of `zero acp` driven by @agentclientprotocol/sdk, the
// official TypeScript client library, over newline-delimited JSON on the
// child's stdio.
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { createInterface } from "node:readline";
import { client, ndJsonStream, methods } from "@agentclientprotocol/sdk";
import { tempDir, toolReply, answer, startModel, spawnZero, until, sleepArg, findByArg, gone } from "./lib.mjs";

const command = (thought, code) => toolReply(thought, "code_execution_tool", { runtime: "terminal", code });

/**
 * Starts `zero acp` against a scripted model and connects the SDK's client:
 * it records session/update notifications per session and answers
 * permission requests with onAsk (default: allow once). Returns the client
 * context after initialize.
 */
async function startAcp(t, replies, { env = {}, onAsk } = {}) {
  const url = await startModel(t, replies);
  const ws = tempDir(t);
  const proc = spawnZero(t, ["acp"], { url, env, cwd: ws });
  const rec = { proc, ws, updates: [], asked: [] };
  const app = client({ name: "zero-e2e" })
    .onNotification(methods.client.session.update, ({ params }) => { rec.updates.push(params); })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      rec.asked.push(params);
      const optionId = onAsk ? onAsk(params) : "allow_once";
      return { outcome: { outcome: "selected", optionId } };
    });
  const stream = ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));
  const conn = app.connect(stream);
  t.after(() => conn.close());
  rec.agent = conn.agent;
  rec.init = await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  rec.of = (id) => rec.updates.filter((u) => u.sessionId === id).map((u) => u.update);
  rec.newSession = async () => {
    const s = await conn.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await until(() => rec.of(s.sessionId).some((u) => u.sessionUpdate === "available_commands_update"), 10000, "commands");
    return s;
  };
  rec.prompt = (sessionId, text) => conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  return rec;
}

const kinds = (us) => us.map((u) => u.sessionUpdate);
const thoughtText = (us) => us.filter((u) => u.sessionUpdate === "agent_thought_chunk").map((u) => u.content.text).join("");
const messageText = (us) => us.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
const toolText = (us) => us.filter((u) => u.sessionUpdate === "tool_call_update" && u.content)
  .flatMap((u) => u.content).map((c) => c.content?.text ?? "").join("");

test("initialize advertises what zero does", async (t) => {
  const z = await startAcp(t, []);
  assert.equal(z.init.protocolVersion, 1);
  assert.equal(z.init.agentInfo.name, "zero");
  assert.equal(z.init.agentCapabilities.loadSession, true);
  assert.ok(z.init.agentCapabilities.sessionCapabilities.list);
});

test("a run streams thoughts, the command and its output before the answer", async (t) => {
  const z = await startAcp(t, [
    { reasoning: "let me check", content: command("run it", "echo e2e-hello") },
    { content: answer("done: e2e-hello") },
  ]);
  const s = await z.newSession();
  assert.ok(s.configOptions.some((o) => o.id === "profile"), "profile config option");
  const res = await z.prompt(s.sessionId, "say hello");
  assert.equal(res.stopReason, "end_turn");
  const us = z.of(s.sessionId);
  const order = kinds(us);
  const call = us.find((u) => u.sessionUpdate === "tool_call");
  assert.equal(call.kind, "execute");
  assert.equal(call.status, "pending");
  assert.ok(order.indexOf("agent_thought_chunk") < order.indexOf("tool_call"), order.join(" "));
  assert.ok(order.lastIndexOf("tool_call_update") < order.lastIndexOf("agent_message_chunk"), order.join(" "));
  assert.ok(us.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress"));
  assert.ok(us.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed"));
  assert.match(toolText(us), /e2e-hello/);
  assert.equal(messageText(us), "done: e2e-hello");
});

test("a prompt during a run joins it as an intervention", async (t) => {
  const z = await startAcp(t, [
    { reasoning: "thinking slowly about it", chunk_size: 4, hold_after: 1, content: answer("first answer") },
    { match: "CHANGE-OF-PLAN", content: answer("switched plans") },
  ]);
  const s = await z.newSession();
  const first = z.prompt(s.sessionId, "start something");
  // The run's own reasoning, not just any thought chunk: the sandbox's
  // start-up warning is one too, and may come before the run has begun,
  // which would let the second prompt start the run instead.
  await until(() => thoughtText(z.of(s.sessionId)).includes("thin"), 10000, "the run's reasoning");
  const second = await z.prompt(s.sessionId, "CHANGE-OF-PLAN please");
  assert.equal(second.stopReason, "end_turn");
  assert.equal((await first).stopReason, "end_turn");
  assert.match(messageText(z.of(s.sessionId)), /switched plans/);
});

test("session/cancel stops a running command", async (t) => {
  const arg = sleepArg();
  const z = await startAcp(t, [
    { content: command("wait", `exec sleep ${arg}`) },
  ]);
  const s = await z.newSession();
  const run = z.prompt(s.sessionId, "wait a while");
  let pid = 0;
  await until(() => (pid = findByArg(arg)) !== 0, 10000, "the command");
  await z.agent.notify(methods.agent.session.cancel, { sessionId: s.sessionId });
  assert.equal((await run).stopReason, "cancelled");
  assert.ok(z.of(s.sessionId).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed"));
  await until(() => gone(pid), 10000, "the command to die");
});

test("approvals: allow always is remembered, reject refuses", async (t) => {
  const z = await startAcp(t, [
    { match: "two commands", content: command("one", "echo first-run") },
    { match: "first-run", content: command("two", "echo second-run") },
    { match: "second-run", content: answer("both ran") },
    { match: "make a file", content: command("try", "touch refused.txt") },
    { match: "The user refused this call", content: answer("not running it") },
  ], { env: { ZERO_APPROVAL: "ask" }, onAsk: (p) => (p.toolCall.rawInput?.code?.startsWith("touch") ? "reject_once" : "allow_always") });
  const a = await z.newSession();
  assert.equal((await z.prompt(a.sessionId, "run two commands")).stopReason, "end_turn");
  assert.equal(z.asked.length, 1, "allow always asks once");
  assert.match(toolText(z.of(a.sessionId)), /second-run/);
  const b = await z.newSession();
  assert.equal((await z.prompt(b.sessionId, "make a file")).stopReason, "end_turn");
  assert.equal(z.asked.length, 2);
  assert.ok(z.of(b.sessionId).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed"));
  assert.equal(existsSync(join(z.ws, "refused.txt")), false);
  assert.equal(messageText(z.of(b.sessionId)), "not running it");
});

test("session/load replays the session; list shows it", async (t) => {
  const z = await startAcp(t, [
    { content: command("run", "echo replayed-output") },
    { content: answer("the answer") },
  ]);
  const s = await z.newSession();
  await z.prompt(s.sessionId, "first message");
  const before = z.updates.length;
  await z.agent.request(methods.agent.session.load, { sessionId: s.sessionId, cwd: z.ws, mcpServers: [] });
  const replay = z.updates.slice(before).filter((u) => u.sessionId === s.sessionId).map((u) => u.update);
  // Events from before the first run (the sandbox's warning) may come first.
  const user = replay.findIndex((u) => u.sessionUpdate === "user_message_chunk");
  assert.ok(user >= 0 && user < kinds(replay).indexOf("tool_call"), kinds(replay).join(" "));
  assert.equal(replay[user].content.text, "first message");
  assert.match(toolText(replay), /replayed-output/);
  assert.equal(messageText(replay), "the answer");
  const list = await z.agent.request(methods.agent.session.list, {});
  assert.ok(list.sessions.some((x) => x.sessionId === s.sessionId && x.cwd === z.ws));
  await assert.rejects(z.agent.request(methods.agent.session.load, { sessionId: "nope", cwd: z.ws, mcpServers: [] }),
    (e) => e.code === -32002);
});

test("two sessions run at once", async (t) => {
  const z = await startAcp(t, [
    { match: "alpha task", reasoning: "alpha thinking", chunk_size: 3, delay: "5ms", content: answer("alpha done") },
    { match: "beta task", reasoning: "beta thinking", chunk_size: 3, delay: "5ms", content: answer("beta done") },
  ]);
  const a = await z.newSession();
  const b = await z.newSession();
  const [ra, rb] = await Promise.all([z.prompt(a.sessionId, "alpha task"), z.prompt(b.sessionId, "beta task")]);
  assert.equal(ra.stopReason, "end_turn");
  assert.equal(rb.stopReason, "end_turn");
  assert.equal(messageText(z.of(a.sessionId)), "alpha done");
  assert.equal(messageText(z.of(b.sessionId)), "beta done");
});

test("robustness on the raw stream, and stdin closing ends the process", async (t) => {
  const url = await startModel(t, []);
  const ws = tempDir(t);
  const proc = spawnZero(t, ["acp"], { url, cwd: ws });
  const lines = createInterface({ input: proc.stdout });
  const queue = [];
  lines.on("line", (l) => queue.push(JSON.parse(l)));
  const next = async () => { await until(() => queue.length > 0, 10000, "an answer"); return queue.shift(); };
  const send = (s) => proc.stdin.write(s + "\n");

  send('{"jsonrpc":"2.0","id":1,"method":');
  assert.equal((await next()).error.code, -32700);
  send('{"jsonrpc":"2.0","id":2,"method":"zero/nothing","params":{}}');
  assert.equal((await next()).error.code, -32601);
  send('{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":5,"mcpServers":[]}}');
  const bad = await next();
  assert.equal(bad.error.code, -32602);
  assert.match(JSON.stringify(bad.error.data), /cwd/);
  send('{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":1}}');
  assert.equal((await next()).result.protocolVersion, 1);

  const exited = once(proc, "exit");
  const start = Date.now();
  proc.stdin.end();
  await exited;
  assert.ok(Date.now() - start < 2000, `exit took ${Date.now() - start} ms`);
});

test("closing stdin mid-command ends the run and the process within 2 s", async (t) => {
  const arg = sleepArg();
  const z = await startAcp(t, [
    { content: command("wait", `sh -c 'exec sleep ${arg}'`) },
  ]);
  const s = await z.newSession();
  const run = z.prompt(s.sessionId, "wait a while").catch(() => null); // the connection goes away
  let pid = 0;
  await until(() => (pid = findByArg(arg)) !== 0, 10000, "the command");
  const exited = once(z.proc, "exit");
  const start = Date.now();
  z.proc.stdin.end();
  await exited;
  assert.ok(Date.now() - start < 2000, `exit took ${Date.now() - start} ms`);
  await run;
  await until(() => gone(pid), 5000, "the command to die");
});

test("session/resume and session/load of a session no process ever made: an honest error", async (t) => {
  const z = await startAcp(t, []);
  for (const method of [methods.agent.session.resume, methods.agent.session.load]) {
    const err = await z.agent.request(method, { sessionId: "0123456789abcdef", cwd: z.ws, mcpServers: [] }).then(
      () => null, (e) => e);
    assert.ok(err, `${method} of an unknown session succeeded`);
    assert.equal(err.code, -32002, `${method}: ${JSON.stringify(err)}`);
    assert.equal(err.message,
      "Resource not found: no session 0123456789abcdef (it was deleted, or made with another data directory); start a new session",
      `${method}: ${err.message}`);
  }
  // The connection goes on: a new session works.
  assert.ok((await z.newSession()).sessionId);
});

test("plan mode: offered as the mode config option and as modes; a command is refused in it; set_config_option leaves it", async (t) => {
  const z = await startAcp(t, [
    { match: "PLAN-E2E", content: command("make it", "touch e2e-planned.txt") },
    { match: "plan mode is on", content: answer("plan: touch e2e-planned.txt") },
  ]);
  const s = await z.newSession();
  const mode = s.configOptions.find((o) => o.category === "mode");
  assert.equal(mode?.id, "mode", "the mode config option");
  assert.deepEqual(mode.options.map((o) => o.value), ["default", "plan"]);
  assert.equal(s.modes.currentModeId, "default");
  await z.agent.request(methods.agent.session.setMode, { sessionId: s.sessionId, modeId: "plan" });
  await until(() => z.of(s.sessionId).some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "plan"), 10000, "current_mode_update");
  const res = await z.prompt(s.sessionId, "PLAN-E2E: make the file");
  assert.equal(res.stopReason, "end_turn");
  assert.equal(messageText(z.of(s.sessionId)), "plan: touch e2e-planned.txt");
  assert.ok(!existsSync(join(z.ws, "e2e-planned.txt")), "the command ran in plan mode");
  const refused = z.of(s.sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
  assert.ok(refused, "the refused call failed");
  const set = await z.agent.request(methods.agent.session.setConfigOption, { sessionId: s.sessionId, configId: "mode", value: "default" });
  assert.equal(set.configOptions.find((o) => o.id === "mode").currentValue, "default");
});

test("the workspace's saved commands are available commands; /name runs the expanded text", async (t) => {
  const z = await startAcp(t, [
    { match: "E2E-ACP-REVIEW of main.go", content: answer("reviewed: e2e-acp-cmd-ok") },
  ]);
  const { mkdirSync, writeFileSync } = await import("node:fs");
  mkdirSync(join(z.ws, ".claude", "commands"), { recursive: true });
  writeFileSync(join(z.ws, ".claude", "commands", "review.md"), "---\ndescription: Review a file\nargument-hint: FILE\n---\nE2E-ACP-REVIEW of $1\n");
  const s = await z.newSession();
  const update = z.of(s.sessionId).find((u) => u.sessionUpdate === "available_commands_update");
  const review = update.availableCommands.find((c) => c.name === "review");
  assert.deepEqual(review, { name: "review", description: "Review a file (.claude/commands/review.md)", input: { hint: "FILE" } });
  const res = await z.prompt(s.sessionId, "/review main.go");
  assert.equal(res.stopReason, "end_turn");
  assert.match(messageText(z.of(s.sessionId)), /e2e-acp-cmd-ok/);
});

test("an image the editor attaches reaches the model as an image part", async (t) => {
  // A 1×1 PNG: small enough that Zero sends it byte for byte.
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
  const sum = createHash("sha256").update(Buffer.from(png, "base64")).digest("hex");
  // The scripted model answers only a request that holds this picture.
  const z = await startAcp(t, [{ match: `[image image/png sha256:${sum}]`, content: answer("e2e-acp-saw-the-image") }]);
  assert.equal(z.init.agentCapabilities.promptCapabilities.image, true);
  const s = await z.newSession();
  const res = await z.agent.request(methods.agent.session.prompt, {
    sessionId: s.sessionId,
    prompt: [{ type: "text", text: "what is in it?" }, { type: "image", mimeType: "image/png", data: png }],
  });
  assert.equal(res.stopReason, "end_turn");
  assert.match(messageText(z.of(s.sessionId)), /e2e-acp-saw-the-image/);
  await assert.rejects(
    z.agent.request(methods.agent.session.prompt, {
      sessionId: s.sessionId,
      prompt: [{ type: "text", text: "and this?" }, { type: "image", mimeType: "image/png", data: Buffer.from("not a picture").toString("base64") }],
    }),
    (e) => e.code === -32602 && /not an image/.test(JSON.stringify(e.data)),
  );
});
