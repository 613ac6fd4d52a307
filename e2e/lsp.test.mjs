// End-to-end tests of `zero lsp` driven by vscode-jsonrpc, the JSON-RPC
// library VS Code's language client is built on, over LSP's Content-Length
// framing on the child's stdio.
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import rpc from "vscode-jsonrpc/node";
import { tempDir, toolReply, answer, startModel, spawnZero, until } from "./lib.mjs";

const { createMessageConnection, StreamMessageReader, StreamMessageWriter, CancellationTokenSource, ResponseError } = rpc;

const command = (thought, code) => toolReply(thought, "code_execution_tool", { runtime: "terminal", code });

/**
 * Starts `zero lsp` against a scripted model and connects: the client
 * records notifications and $/progress, creates progress tokens, answers
 * showMessageRequest with onAsk (default Allow) and records showDocument.
 */
async function startLsp(t, replies, { env = {}, onAsk } = {}) {
  const url = await startModel(t, replies);
  const ws = tempDir(t);
  const proc = spawnZero(t, ["lsp"], { url, env, cwd: ws });
  const rec = { proc, ws, notes: [], progress: [], created: [], asked: [], shown: [], logged: [] };
  const logger = {
    error: (m) => rec.logged.push(m), warn: (m) => rec.logged.push(m),
    info: () => {}, log: () => {},
  };
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin), logger);
  rec.conn = conn;
  conn.onNotification((method, params) => rec.notes.push({ method, params }));
  conn.onUnhandledProgress((p) => rec.progress.push(p));
  conn.onRequest("window/workDoneProgress/create", (p) => { rec.created.push(p.token); return null; });
  conn.onRequest("window/showMessageRequest", (p) => { rec.asked.push(p); return onAsk ? onAsk(p) : { title: "Allow" }; });
  conn.onRequest("window/showDocument", (p) => { rec.shown.push(p); return { success: true }; });
  conn.listen();
  t.after(() => conn.dispose());
  rec.init = await conn.sendRequest("initialize", {
    processId: process.pid,
    rootUri: pathToFileURL(ws).href,
    capabilities: { window: { workDoneProgress: true, showDocument: { support: true } } },
  });
  await conn.sendNotification("initialized", {});
  rec.events = (sid) => rec.notes.filter((n) => n.method === "zero/event" && (!sid || n.params.session === sid)).map((n) => n.params);
  rec.newSession = async (params = {}) => (await conn.sendRequest("zero/newSession", params)).sessionId;
  return rec;
}

async function rpcError(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof ResponseError, `want a ResponseError, got ${e}`);
    return e;
  }
  assert.fail("want an error");
}

test("initialize advertises the commands and the server", async (t) => {
  const z = await startLsp(t, []);
  assert.deepEqual(z.init.capabilities.executeCommandProvider.commands, ["zero.lsp.prompt", "zero.lsp.cancel", "zero.lsp.newSession"]);
  assert.equal(z.init.serverInfo.name, "zero");
});

test("a run executes a command; thoughts, tool call and output arrive before the answer", async (t) => {
  const z = await startLsp(t, [
    { match: "say hello", reasoning: "I should run echo", chunk_size: 3, content: command("run echo", "echo hello-out") },
    { match: "hello-out", content: answer("done: hello-out") },
  ]);
  const sid = await z.newSession();
  const res = await z.conn.sendRequest("zero/prompt", { sessionId: sid, message: "say hello" });
  assert.equal(res.stopReason, "response");
  assert.equal(res.response, "done: hello-out");
  const evs = z.events(sid);
  const at = (pred) => evs.findIndex(pred);
  const thought = at((e) => e.type === "thoughts_delta");
  const call = at((e) => e.type === "tool_call" && e.tool === "code_execution_tool");
  const out = at((e) => e.type === "tool_output_delta" && e.text.includes("hello-out"));
  const resp = at((e) => e.type === "response" && e.agent === 0);
  assert.ok(thought >= 0 && call > thought && out > call && resp > out, `order: ${evs.map((e) => e.type).join(",")}`);
  assert.equal(evs.filter((e) => e.type !== "usage").at(-1).type, "run_ended"); // the memory's usage may follow
  // The run is a work-done progress on the token the server created.
  assert.equal(z.created.length, 1);
  const kinds = z.progress.filter((p) => p.token === z.created[0]).map((p) => p.value.kind);
  assert.equal(kinds[0], "begin");
  assert.ok(kinds.includes("report"), kinds.join(","));
  assert.equal(kinds.at(-1), "end");
  assert.equal(z.progress[0].value.message, "say hello");
});

test("a message during a run is an intervention", async (t) => {
  const z = await startLsp(t, [
    { match: "long task", content: command("working slowly", "echo slow"), chunk_size: 4, hold_after: 6 },
    { match: "also say banana", content: answer("banana noted") },
  ]);
  const sid = await z.newSession();
  const first = z.conn.sendRequest("zero/prompt", { sessionId: sid, message: "long task" });
  await until(() => z.events(sid).some((e) => e.type === "thoughts_delta"), 10000, "streaming");
  const second = await z.conn.sendRequest("zero/prompt", { sessionId: sid, message: "also say banana" });
  assert.equal(second.stopReason, "intervened");
  const res = await first;
  assert.equal(res.response, "banana noted");
});

test("cancel mid-command: zero/cancel and a cancelled request", async (t) => {
  const z = await startLsp(t, [
    { match: "wait a lot", content: command("sleeping", "sleep 30") },
    { match: "sleep again", content: command("sleeping", "sleep 30") },
  ]);
  const sid = await z.newSession();
  const started = Date.now();
  const p = z.conn.sendRequest("zero/prompt", { sessionId: sid, message: "wait a lot" });
  await until(() => z.events(sid).some((e) => e.type === "tool_started"), 10000, "the command");
  await z.conn.sendRequest("zero/cancel", { sessionId: sid });
  assert.equal((await p).stopReason, "cancelled");

  const cts = new CancellationTokenSource();
  const q = z.conn.sendRequest("zero/prompt", { sessionId: sid, message: "sleep again" }, cts.token);
  await until(() => z.events(sid).filter((e) => e.type === "tool_started").length === 2, 10000, "the second command");
  cts.cancel();
  const e = await rpcError(q);
  assert.equal(e.code, -32800);
  assert.ok(Date.now() - started < 15000, "the commands were not stopped");
  const ended = () => z.events(sid).filter((e) => e.type !== "usage").at(-1); // the memory's usage may follow
  await until(() => ended()?.type === "run_ended", 5000, "run_ended");
  assert.equal(ended().stop_reason, "cancelled");
});

for (const [name, action, want] of [["granted", "Allow", "ran: approved-42"], ["refused", "Deny", "not allowed"]]) {
  test(`an approval ${name} through showMessageRequest`, async (t) => {
    const z = await startLsp(t, [
      { match: "risky", content: command("risky step", "echo approved-$((40+2))") },
      { match: "approved-42", content: answer("ran: approved-42") },
      { match: "refused by", content: answer("not allowed") },
    ], { env: { ZERO_APPROVAL: "ask" }, onAsk: () => ({ title: action }) });
    const sid = await z.newSession();
    const res = await z.conn.sendRequest("zero/prompt", { sessionId: sid, message: "risky" });

    assert.equal(res.response, want);
    assert.equal(z.asked.length, 1);
    assert.match(z.asked[0].message, /^Zero wants to run: /);
    assert.deepEqual(z.asked[0].actions.map((a) => a.title), ["Allow", "Allow always", "Deny"]);
  });
}

test("a file the agent wrote is shown", async (t) => {
  const z = await startLsp(t, [
    { match: "write it", content: toolReply("writing", "text_editor:write", { path: "notes.txt", content: "hello\n" }) },
    { match: "notes.txt", content: answer("written") },
  ]);
  const sid = await z.newSession();
  assert.equal((await z.conn.sendRequest("zero/prompt", { sessionId: sid, message: "write it" })).response, "written");
  await until(() => z.shown.length > 0, 5000, "showDocument");
  assert.equal(z.shown[0].uri, pathToFileURL(`${z.ws}/notes.txt`).href);
  assert.equal(z.shown[0].takeFocus, false);
});

test("loading a session back replays its events", async (t) => {
  const z = await startLsp(t, [{ match: "remember", content: answer("remembered") }]);
  const sid = await z.newSession();
  await z.conn.sendRequest("zero/prompt", { sessionId: sid, message: "remember this" });
  const before = z.events(sid).length;
  const list = await z.conn.sendRequest("zero/sessions", {});
  assert.deepEqual(list.sessions.map((s) => s.id), [sid]);
  const res = await z.conn.sendRequest("zero/loadSession", { sessionId: sid });
  // The replay joins the deltas the live stream may have sent apart. The
  // usage of the memory's work after the run may come live at any time
  // meanwhile, and is replayed too: the rest is compared.
  const worded = (evs) => evs.filter((e) => e.type !== "usage");
  const live = coalesce(z.events(sid).slice(0, before));
  assert.ok(res.events >= live.length, `${res.events} events replayed, ${live.length} live`);
  assert.deepEqual(worded(z.events(sid).slice(before)), worded(live));
});

const DELTAS = new Set(["reasoning_delta", "thoughts_delta", "response_delta", "tool_output_delta"]);

/** Consecutive deltas of one stream joined into one, as zero replays them (server.Coalesce). */
function coalesce(evs) {
  const out = [];
  for (const e of evs) {
    const last = out[out.length - 1];
    if (last && DELTAS.has(e.type) && last.type === e.type && (last.agent ?? 0) === (e.agent ?? 0) && last.item === e.item) {
      out[out.length - 1] = { ...last, text: (last.text ?? "") + (e.text ?? ""), seq: e.seq };
      continue;
    }
    out.push(e);
  }
  return out;
}

test("two sessions at once", async (t) => {
  const z = await startLsp(t, [
    { match: "slow one", content: command("sleeping", "sleep 30") },
    { match: "quick one", content: command("quick", "echo quick-out") },
    { match: "quick-out", content: answer("quick done") },
  ]);
  const extra = tempDir(t);
  writeFileSync(`${extra}/marker.txt`, "x");
  const a = await z.newSession();
  const b = await z.newSession({ workspaceFolders: [{ uri: pathToFileURL(extra).href, name: "extra" }] });
  const slow = z.conn.sendRequest("zero/prompt", { sessionId: a, message: "slow one" });
  await until(() => z.events(a).some((e) => e.type === "tool_started"), 10000, "the slow command");
  const quick = await z.conn.sendRequest("zero/prompt", { sessionId: b, message: "quick one" });
  assert.equal(quick.response, "quick done");
  assert.ok(z.events(b).every((e) => e.session === b));
  await z.conn.sendRequest("zero/cancel", { sessionId: a });
  assert.equal((await slow).stopReason, "cancelled");
});

test("robustness: parse error, method not found, invalid params, stdin closed", async (t) => {
  const z = await startLsp(t, []);
  // A well-framed body that is not JSON: an error response with id null,
  // which vscode-jsonrpc logs, and the server keeps serving.
  z.proc.stdin.write("Content-Length: 9\r\n\r\n{\"bad\":,}");
  await until(() => z.logged.some((m) => m.includes("-32700")), 5000, "the parse error");
  const sessions = await z.conn.sendRequest("zero/sessions", {});
  assert.deepEqual(sessions.sessions, []);
  assert.equal((await rpcError(z.conn.sendRequest("zero/nope", {}))).code, -32601);
  const bad = await rpcError(z.conn.sendRequest("zero/prompt", { message: "hi" }));
  assert.equal(bad.code, -32602);
  assert.match(bad.message, /sessionId: required/);
  const typed = await rpcError(z.conn.sendRequest("zero/newSession", { workspaceFolders: "nope" }));
  assert.match(typed.message, /workspaceFolders: must be an array/);
  const t0 = Date.now();
  z.proc.stdin.end();
  if (z.proc.exitCode === null) await once(z.proc, "exit");
  assert.ok(Date.now() - t0 < 2000, `exited after ${Date.now() - t0} ms`);
});

test("requests before initialize are refused", async (t) => {
  const url = await startModel(t, []);
  const proc = spawnZero(t, ["lsp"], { url, cwd: tempDir(t) });
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  conn.listen();
  t.after(() => conn.dispose());
  assert.equal((await rpcError(conn.sendRequest("zero/sessions", {}))).code, -32002);
  await conn.sendRequest("initialize", { processId: null, rootUri: null, capabilities: {} });
  await conn.sendRequest("shutdown");
  conn.sendNotification("exit");
  const [code] = proc.exitCode === null ? await once(proc, "exit") : [proc.exitCode];
  assert.equal(code, 0);
});
