// Sessions outlive their process, tried from outside: each face (ACP with
// @agentclientprotocol/sdk, LSP with vscode-jsonrpc, MCP with
// @modelcontextprotocol/sdk) starts a session, its zero is killed with
// SIGKILL (no clean shutdown), and a new zero of the same face, sharing the
// first one's HOME (so its session store), lists, loads and continues it.
// Every follow-up is answered by a scripted reply whose `match` is a phrase
// only the first turn said: the answer proves the earlier turns reached the
// model. Then one session goes through every face and the terminal
// commands.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Readable, Writable } from "node:stream";
import { createInterface } from "node:readline";
import { client as acpClient, ndJsonStream, methods } from "@agentclientprotocol/sdk";
import rpc from "vscode-jsonrpc/node";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ZERO_BIN, tempDir, toolReply, answer, startModel, spawnZero, until, sleepArg, findByArg, gone } from "./lib.mjs";

const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = rpc;

const command = (thought, code) => toolReply(thought, "code_execution_tool", { runtime: "terminal", code });

/**
 * A HOME (and config folder) for several zero processes: they share its
 * session store, ~/.local/share/zero/zero.db.
 */
function sharedHome(t) {
  const home = tempDir(t, "zero-shared-home-");
  return { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
}

const storeFile = (home) => join(home.HOME, ".local", "share", "zero", "zero.db");

/** Kills proc with SIGKILL and waits until it is gone (and reaped). */
async function killHard(proc) {
  const exited = proc.exitCode === null && proc.signalCode === null ? once(proc, "exit") : null;
  proc.kill("SIGKILL");
  if (exited) await exited;
  await until(() => gone(proc.pid), 10000, "the killed zero to be reaped");
}

/** zero's environment with the shared home, without making a new one (as zeroEnv does). */
const sharedEnv = (home, url = "") => ({ PATH: process.env.PATH, TMPDIR: process.env.TMPDIR ?? "/tmp", ZERO_MODEL: "llmtest",
  OPENAI_BASE_URL: url, ZERO_SANDBOX: "local", ZERO_APPROVAL: "auto", ...home });

/**
 * Runs `zero <args>` to its end with the shared home and the model at url.
 * Resolves {code, stdout, stderr}; killed after a generous guard.
 */
function zeroCli(t, args, { url, home, cwd }) {
  const proc = spawn(ZERO_BIN, args, { cwd, env: sharedEnv(home, url), stdio: ["ignore", "pipe", "pipe"] });
  t.after(() => { if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL"); });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d) => { stdout += d; });
  proc.stderr.on("data", (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`zero ${args.join(" ")} did not end\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 30000);
    proc.on("error", (e) => { clearTimeout(guard); reject(e); });
    proc.on("close", (code) => { clearTimeout(guard); resolve({ code, stdout, stderr }); });
  });
}

/**
 * Waits until the session's events in the store (as `zero sessions export`
 * prints them, read while another process holds the session) satisfy pred.
 * zero answers a prompt before its last events are committed (the store
 * writes behind the run, "kill -9 loses at most the last few
 * milliseconds"), so a test kills only once what it checks after the
 * restart is on disk.
 */
async function untilStored(t, home, sid, pred, what) {
  await until(async () => {
    const r = await zeroCli(t, ["sessions", "export", sid], { home, cwd: home.HOME });
    return r.code === 0 && pred(JSON.parse(r.stdout).events);
  }, 20000, `${what} in the store`);
}
const runEnded = (n) => (evs) => evs.filter((e) => e.type === "run_ended").length >= n;

// ---------------------------------------------------------------------------
// ACP

/**
 * `zero acp` in dir (default ws; new sessions and loads are on ws) against
 * the model at url with the shared home, and the
 * SDK's client on it: it records session/update notifications and allows
 * every permission request.
 */
async function startAcp(t, url, home, ws, { dir = ws } = {}) {
  const proc = spawnZero(t, ["acp"], { url, env: home, cwd: dir });
  const rec = { proc, ws, updates: [] };
  const app = acpClient({ name: "zero-e2e-restart" })
    .onNotification(methods.client.session.update, ({ params }) => { rec.updates.push(params); })
    .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }));
  const conn = app.connect(ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  t.after(() => conn.close());
  rec.agent = conn.agent;
  rec.init = await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  rec.of = (id, from = 0) => rec.updates.slice(from).filter((u) => u.sessionId === id).map((u) => u.update);
  rec.newSession = async () => {
    const s = await conn.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await until(() => rec.of(s.sessionId).some((u) => u.sessionUpdate === "available_commands_update"), 10000, "commands");
    return s.sessionId;
  };
  rec.prompt = (sessionId, text) => conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  rec.list = async (params = { cwd: ws }) => (await conn.agent.request(methods.agent.session.list, params)).sessions;
  /** session/load: the updates it replayed (its answer goes to rec.loaded). */
  rec.load = async (sessionId) => {
    const from = rec.updates.length;
    rec.loaded = await conn.agent.request(methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    return rec.of(sessionId, from);
  };
  rec.setProfile = (sessionId, value) => conn.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "profile", value });
  return rec;
}

const kinds = (us) => us.map((u) => u.sessionUpdate);
const userText = (us) => us.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
const thoughtText = (us) => us.filter((u) => u.sessionUpdate === "agent_thought_chunk").map((u) => u.content.text).join("");
const messageText = (us) => us.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
const toolText = (us) => us.filter((u) => u.sessionUpdate === "tool_call_update" && u.content)
  .flatMap((u) => u.content).map((c) => c.content?.text ?? "").join("");

test("ACP: a session outlives kill -9; a new zero acp lists it, session/load replays it, and it continues with its history", async (t) => {
  const home = sharedHome(t);
  const ws = tempDir(t);
  const first = "remember the word FLAMINGO-42";
  let sid;
  {
    const url = await startModel(t, [{ match: "FLAMINGO-42", content: answer("noted the word") }]);
    const z = await startAcp(t, url, home, ws);
    sid = await z.newSession();
    // A setting the session keeps: its profile.
    const set = await z.setProfile(sid, "developer");
    assert.equal(set.configOptions.find((o) => o.id === "profile").currentValue, "developer");
    assert.equal((await z.prompt(sid, first)).stopReason, "end_turn");
    assert.equal(messageText(z.of(sid)), "noted the word");
    await untilStored(t, home, sid, runEnded(1), "the end of the run");
    await killHard(z.proc);
  }
  assert.ok(existsSync(storeFile(home)), `no session store at ${storeFile(home)}`);
  // A new process, a new model: its only reply needs the first turn's word.
  const url = await startModel(t, [{ match: "FLAMINGO-42", content: answer("the word was FLAMINGO-42") }]);
  const z = await startAcp(t, url, home, ws);
  const listed = (await z.list()).find((s) => s.sessionId === sid);
  assert.ok(listed, `session/list of ${ws} lacks ${sid}: ${JSON.stringify(await z.list())}`);
  assert.equal(listed.cwd, ws);
  assert.equal(listed.title, first);
  // session/list without cwd: the workspace zero was started in.
  assert.ok((await z.list({})).some((s) => s.sessionId === sid), "session/list without cwd");

  const replay = await z.load(sid);
  assert.deepEqual(userText(replay), [first], kinds(replay).join(" "));
  assert.equal(messageText(replay), "noted the word");
  assert.ok(kinds(replay).indexOf("user_message_chunk") < kinds(replay).indexOf("agent_message_chunk"), kinds(replay).join(" "));
  assert.equal(z.loaded.configOptions.find((o) => o.id === "profile").currentValue, "developer");

  const from = z.updates.length;
  assert.equal((await z.prompt(sid, "which word was it?")).stopReason, "end_turn");
  assert.equal(messageText(z.of(sid, from)), "the word was FLAMINGO-42");
});

test("ACP: kill -9 while the model streams; after restart the replay ends that run as interrupted, and a follow-up works", async (t) => {
  const home = sharedHome(t);
  const ws = tempDir(t);
  const first = "start the long job OSPREY-9";
  let sid;
  {
    // The model streams its reasoning and a little of its reply, then holds
    // the stream until zero goes away.
    const url = await startModel(t, [
      { match: "OSPREY-9", reasoning: "thinking about the long job", chunk_size: 4, hold_after: 2, content: answer("never said") },
    ]);
    const z = await startAcp(t, url, home, ws);
    sid = await z.newSession();
    const run = z.prompt(sid, first).then((r) => r, (e) => e);
    await until(() => thoughtText(z.of(sid)).includes("long job"), 10000, "the run's reasoning");
    await untilStored(t, home, sid, (evs) => evs.filter((e) => e.type === "reasoning_delta").map((e) => e.text).join("").includes("long job"),
      "the run's reasoning");
    await killHard(z.proc);
    assert.ok((await run) instanceof Error, "the prompt of a killed zero has no answer");
  }
  // The follow-up's reply needs the first turn's message, and the note about
  // the interruption zero gives agent 0's history.
  const url = await startModel(t, [
    { match: "previous run was interrupted", content: answer("resuming OSPREY-9 after the interruption") },
  ]);
  const z = await startAcp(t, url, home, ws);
  const listed = (await z.list()).find((s) => s.sessionId === sid);
  assert.ok(listed, "the interrupted session is listed");
  assert.equal(listed.title, first);
  const replay = await z.load(sid);
  const order = kinds(replay).join(" ");
  assert.deepEqual(userText(replay), [first], order);
  assert.match(thoughtText(replay), /thinking about the long job/);
  // The run ends, in the replay, with zero's error saying it was interrupted.
  const said = messageText(replay);
  assert.match(said, /Error: interrupted: Zero stopped before this run ended \(the process was killed or crashed\)/, order);
  assert.doesNotMatch(said, /never said/);
  assert.ok(kinds(replay).indexOf("user_message_chunk") < kinds(replay).lastIndexOf("agent_message_chunk"), order);
  // Loading again replays the same: the interruption was closed once, not again.
  const again = await z.load(sid);
  assert.equal(messageText(again), said);

  const from = z.updates.length;
  assert.equal((await z.prompt(sid, "go on please")).stopReason, "end_turn");
  assert.equal(messageText(z.of(sid, from)), "resuming OSPREY-9 after the interruption");
});

test("ACP: kill -9 while a command runs; after restart its tool call failed as interrupted, and a follow-up works", async (t) => {
  const home = sharedHome(t);
  const ws = tempDir(t);
  const arg = sleepArg();
  // Should the command outlive the zero that started it, it is killed when the test ends.
  t.after(() => { const pid = findByArg(arg); if (pid) try { process.kill(pid, "SIGKILL"); } catch { /* gone */ } });
  const first = "wait for the HERON-5 command";
  let sid;
  {
    const url = await startModel(t, [{ match: "HERON-5", content: command("waiting", `exec sleep ${arg}`) }]);
    const z = await startAcp(t, url, home, ws);
    sid = await z.newSession();
    const run = z.prompt(sid, first).then((r) => r, (e) => e);
    let pid = 0;
    await until(() => (pid = findByArg(arg)) !== 0, 10000, "the command");
    await until(() => z.of(sid).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress"), 10000, "the tool call to run");
    await untilStored(t, home, sid, (evs) => evs.some((e) => e.type === "tool_started"), "the started command");
    await killHard(z.proc);
    await run;
    // The command does not outlive its zero.
    await until(() => gone(pid), 10000, "the command to die with its zero");
  }
  const url = await startModel(t, [{ match: "HERON-5", content: answer("the HERON-5 command was cut short") }]);
  const z = await startAcp(t, url, home, ws);
  const replay = await z.load(sid);
  const order = kinds(replay).join(" ");
  assert.deepEqual(userText(replay), [first], order);
  const call = replay.find((u) => u.sessionUpdate === "tool_call");
  assert.ok(call, `no tool call replayed: ${order}`);
  assert.equal(call.kind, "execute");
  const ends = replay.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId && u.status);
  assert.equal(ends.at(-1)?.status, "failed", JSON.stringify(ends));
  assert.match(toolText(replay), /interrupted: Zero stopped while this tool ran/);
  assert.match(messageText(replay), /Error: interrupted: Zero stopped before this run ended/);

  const from = z.updates.length;
  assert.equal((await z.prompt(sid, "what happened?")).stopReason, "end_turn");
  assert.equal(messageText(z.of(sid, from)), "the HERON-5 command was cut short");
});

// ---------------------------------------------------------------------------
// LSP

/** `zero lsp` in ws with the shared home, initialized with ws as its root; records zero/event notifications. */
async function startLsp(t, url, home, ws) {
  const proc = spawnZero(t, ["lsp"], { url, env: home, cwd: ws });
  const rec = { proc, ws, notes: [] };
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin),
    { error: () => {}, warn: () => {}, info: () => {}, log: () => {} });
  rec.conn = conn;
  conn.onNotification((method, params) => rec.notes.push({ method, params }));
  conn.onRequest("window/workDoneProgress/create", () => null);
  conn.onRequest("window/showMessageRequest", () => ({ title: "Allow" }));
  conn.onRequest("window/showDocument", () => ({ success: true }));
  conn.listen();
  t.after(() => conn.dispose());
  await conn.sendRequest("initialize", {
    processId: process.pid,
    rootUri: pathToFileURL(ws).href,
    capabilities: { window: { workDoneProgress: true } },
  });
  await conn.sendNotification("initialized", {});
  rec.events = (sid, from = 0) => rec.notes.slice(from).filter((n) => n.method === "zero/event" && n.params.session === sid).map((n) => n.params);
  rec.sessions = async (params = {}) => (await conn.sendRequest("zero/sessions", params)).sessions;
  return rec;
}

test("LSP: a session outlives kill -9; a new zero lsp lists it, zero/loadSession replays it, and it continues with its history", async (t) => {
  const home = sharedHome(t);
  const ws = tempDir(t);
  const first = "remember the word PUFFIN-17";
  let sid;
  {
    const url = await startModel(t, [{ match: "PUFFIN-17", content: answer("noted the word") }]);
    const z = await startLsp(t, url, home, ws);
    sid = (await z.conn.sendRequest("zero/newSession", {})).sessionId;
    const res = await z.conn.sendRequest("zero/prompt", { sessionId: sid, message: first });
    assert.equal(res.response, "noted the word");
    await untilStored(t, home, sid, runEnded(1), "the end of the run");
    await killHard(z.proc);
  }
  const url = await startModel(t, [{ match: "PUFFIN-17", content: answer("the word was PUFFIN-17") }]);
  const z = await startLsp(t, url, home, ws);
  const listed = (await z.sessions()).find((s) => s.id === sid);
  assert.ok(listed, `zero/sessions lacks ${sid}`);
  assert.equal(listed.title, first);
  assert.deepEqual(listed.roots, [ws]);
  assert.equal(listed.running, false);
  assert.equal(listed.runs, 1);

  const loaded = await z.conn.sendRequest("zero/loadSession", { sessionId: sid });
  assert.equal(loaded.sessionId, sid);
  const replay = z.events(sid);
  assert.equal(loaded.events, replay.length);
  const types = replay.map((e) => e.type).join(",");
  assert.equal(replay.find((e) => e.type === "run_started")?.text, first, types);
  assert.equal(replay.find((e) => e.type === "response" && (e.agent ?? 0) === 0)?.text, "noted the word", types);
  // The run's last event; the usage of the memory's work after it may follow.
  assert.equal(replay.filter((e) => e.type !== "usage").at(-1).type, "run_ended", types);

  const from = z.notes.length;
  const res = await z.conn.sendRequest("zero/prompt", { sessionId: sid, message: "which word was it?" });
  assert.equal(res.stopReason, "response");
  assert.equal(res.response, "the word was PUFFIN-17");
  assert.ok(z.events(sid, from).some((e) => e.type === "run_started" && e.text === "which word was it?"));
  assert.equal((await z.sessions()).find((s) => s.id === sid).runs, 2);
});

// ---------------------------------------------------------------------------
// MCP

/** An SDK client on `zero mcp` in ws with the shared home; closed when the test ends. */
async function startMcp(t, url, home, ws) {
  const transport = new StdioClientTransport({ command: ZERO_BIN, args: ["mcp"], env: sharedEnv(home, url), stderr: "pipe", cwd: ws });
  let stderr = "";
  transport.stderr?.on("data", (d) => { stderr += d; });
  const client = new Client({ name: "e2e-restart", version: "1" });
  t.after(() => client.close());
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`connect: ${e.message}\n${stderr}`);
  }
  client.stderrText = () => stderr;
  client.callRaw = (name, args) => client.callTool({ name, arguments: args });
  client.call = async (name, args) => {
    const res = await client.callTool({ name, arguments: args });
    assert.ok(!res.isError, `${name} failed: ${JSON.stringify(res.content)}\n${stderr}`);
    return res.structuredContent;
  };
  client.closed = new Promise((resolve) => { client.onclose = resolve; });
  client.killHard = async () => {
    const pid = transport.pid;
    assert.ok(pid, "zero mcp runs");
    process.kill(pid, "SIGKILL");
    await client.closed; // the transport saw the process close: it is reaped
    await until(() => gone(pid), 10000, "the killed zero to be reaped");
  };
  return client;
}

test("MCP: a session outlives kill -9; a new zero mcp lists it, its resource holds the transcript, and zero_run continues it", async (t) => {
  const home = sharedHome(t);
  const ws = tempDir(t);
  const first = "remember the word GANNET-23";
  let sid;
  {
    const url = await startModel(t, [{ match: "GANNET-23", content: answer("noted the word") }]);
    const c = await startMcp(t, url, home, ws);
    const out = await c.call("zero_run", { message: first, workspace: ws });
    assert.equal(out.response, "noted the word");
    sid = out.session;
    await untilStored(t, home, sid, runEnded(1), "the end of the run");
    await c.killHard();
  }
  const url = await startModel(t, [{ match: "GANNET-23", content: answer("the word was GANNET-23") }]);
  const c = await startMcp(t, url, home, ws);
  const { sessions } = await c.call("zero_sessions", {});
  const listed = sessions.find((s) => s.id === sid);
  assert.ok(listed, `zero_sessions lacks ${sid}: ${JSON.stringify(sessions)}`);
  assert.equal(listed.title, first);
  assert.equal(listed.runs, 1);
  assert.equal((await c.call("zero_sessions", { workspace: ws })).sessions.filter((s) => s.id === sid).length, 1);

  const read = await c.readResource({ uri: `zero://session/${sid}` });
  const text = read.contents[0].text;
  assert.ok(text.indexOf(first) >= 0 && text.indexOf(first) < text.indexOf("noted the word"), text);

  const again = await c.call("zero_run", { message: "which word was it?", session: sid });
  assert.equal(again.session, sid);
  assert.equal(again.run, 2);
  assert.equal(again.stop_reason, "response");
  assert.equal(again.response, "the word was GANNET-23");
  const after = await c.readResource({ uri: `zero://session/${sid}` });
  assert.match(after.contents[0].text, /GANNET-23[\s\S]*noted the word[\s\S]*which word was it\?[\s\S]*the word was GANNET-23/);
});

// ---------------------------------------------------------------------------
// One session, any face

test("one session, any face: zero run, then ACP, then zero run --continue; every face lists it; zero sessions shows and removes it", async (t) => {
  const home = sharedHome(t);
  const ws = tempDir(t);
  const other = tempDir(t);
  const cwd = tempDir(t); // the terminal commands run elsewhere: --workspace chooses
  const ok = (r, what) => assert.equal(r.code, 0, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);

  // 1. Begun in the terminal; another workspace gets a session too.
  const m1 = await startModel(t, [
    { match: "terminal turn ORCA-1", content: answer("first answer, from the terminal") },
    { match: "elsewhere SKUA-0", content: answer("the other workspace's answer") },
  ]);
  const r1 = await zeroCli(t, ["run", "--workspace", ws, "terminal turn ORCA-1"], { url: m1, home, cwd });
  ok(r1, "zero run");
  assert.match(r1.stdout, /first answer, from the terminal/);
  const r0 = await zeroCli(t, ["run", "--workspace", other, "elsewhere SKUA-0"], { url: m1, home, cwd });
  ok(r0, "zero run in the other workspace");

  // 2. Listed, loaded and continued in ACP (started in another folder: the cwd given chooses).
  const m2 = await startModel(t, [{ match: "ORCA-1", content: answer("the ACP turn saw ORCA-1") }]);
  const acp = await startAcp(t, m2, home, ws, { dir: cwd });
  assert.deepEqual(await acp.list({}), [], "session/list without cwd lists the folder zero acp started in");
  const listed = await acp.list({ cwd: ws });
  assert.equal(listed.length, 1, JSON.stringify(listed));
  const sid = listed[0].sessionId;
  assert.equal(listed[0].title, "terminal turn ORCA-1");
  assert.equal(listed[0].cwd, ws);
  const listedOther = await acp.list({ cwd: other });
  assert.equal(listedOther.length, 1, JSON.stringify(listedOther));
  const otherSid = listedOther[0].sessionId;
  assert.notEqual(otherSid, sid);
  assert.equal(listedOther[0].title, "elsewhere SKUA-0");
  const replay = await acp.load(sid);
  assert.deepEqual(userText(replay), ["terminal turn ORCA-1"]);
  assert.equal(messageText(replay), "first answer, from the terminal");
  const from = acp.updates.length;
  assert.equal((await acp.prompt(sid, "acp turn HERON-2")).stopReason, "end_turn");
  assert.equal(messageText(acp.of(sid, from)), "the ACP turn saw ORCA-1");

  // While ACP's zero holds it, the terminal may not take it.
  const m3 = await startModel(t, [{ match: "HERON-2", content: answer("the terminal saw the ACP turn HERON-2") }]);
  const busy = await zeroCli(t, ["run", "--session", sid, "next"], { url: m3, home, cwd });
  assert.notEqual(busy.code, 0, `a second process took a held session\n${busy.stdout}`);
  assert.match(busy.stderr, new RegExp(`session ${sid} is open in another zero process`));

  // 3. ACP's zero ends; the terminal continues the session, and the model sees the ACP turn.
  const exited = once(acp.proc, "exit");
  acp.proc.stdin.end();
  await exited;
  const r3 = await zeroCli(t, ["run", "--continue", "--workspace", ws, "next"], { url: m3, home, cwd });
  ok(r3, "zero run --continue");
  assert.match(r3.stdout, /the terminal saw the ACP turn HERON-2/);

  // 4. MCP and LSP list it (and only this workspace's, unless asked for all).
  const m4 = await startModel(t, []);
  const mcp = await startMcp(t, m4, home, ws);
  const mcpList = async (args) => (await mcp.call("zero_sessions", args)).sessions.map((s) => s.id).sort();
  assert.deepEqual(await mcpList({}), [sid]);
  assert.deepEqual(await mcpList({ workspace: ws }), [sid]);
  assert.deepEqual(await mcpList({ workspace: other }), [otherSid]);
  assert.deepEqual(await mcpList({ all: true }), [sid, otherSid].sort());
  const mcpInfo = (await mcp.call("zero_sessions", {})).sessions[0];
  assert.equal(mcpInfo.runs, 3, "zero run --continue went on in the same session");
  assert.equal(mcpInfo.title, "terminal turn ORCA-1");
  const lsp = await startLsp(t, m4, home, ws);
  const lspList = async (params) => (await lsp.sessions(params)).map((s) => s.id).sort();
  assert.deepEqual(await lspList({}), [sid]);
  assert.deepEqual(await lspList({ workspace: other }), [otherSid]);
  assert.deepEqual(await lspList({ all: true }), [sid, otherSid].sort());

  // 5. zero sessions: ls per workspace, show, rm.
  const ls = await zeroCli(t, ["sessions", "ls", "--workspace", ws], { url: m4, home, cwd });
  ok(ls, "zero sessions ls");
  assert.match(ls.stdout, new RegExp(`^${sid}\\s.*terminal turn ORCA-1`, "m"));
  assert.doesNotMatch(ls.stdout, new RegExp(otherSid));
  const lsAll = await zeroCli(t, ["sessions", "ls", "--all"], { url: m4, home, cwd });
  ok(lsAll, "zero sessions ls --all");
  assert.match(lsAll.stdout, new RegExp(sid));
  assert.match(lsAll.stdout, new RegExp(otherSid));
  const show = await zeroCli(t, ["sessions", "show", sid], { url: m4, home, cwd });
  ok(show, "zero sessions show");
  const tr = show.stdout;
  let pos = 0;
  for (const said of ["terminal turn ORCA-1", "first answer, from the terminal", "acp turn HERON-2", "the ACP turn saw ORCA-1",
    "next", "the terminal saw the ACP turn HERON-2"]) {
    const i = tr.indexOf(said, pos);
    assert.ok(i >= 0, `the transcript lacks ${JSON.stringify(said)} (in this order):\n${tr}`);
    pos = i + said.length;
  }
  assert.doesNotMatch(tr, /SKUA-0/);

  const rm = await zeroCli(t, ["sessions", "rm", sid], { url: m4, home, cwd });
  ok(rm, "zero sessions rm");
  assert.match(rm.stdout, new RegExp(`deleted ${sid}`));
  const lsAfter = await zeroCli(t, ["sessions", "ls", "--workspace", ws], { url: m4, home, cwd });
  ok(lsAfter, "zero sessions ls after rm");
  assert.doesNotMatch(lsAfter.stdout, new RegExp(sid));
  const showAfter = await zeroCli(t, ["sessions", "show", sid], { url: m4, home, cwd });
  assert.notEqual(showAfter.code, 0);
  assert.match(showAfter.stderr, new RegExp(`no session "${sid}"`));
  // The processes already running see it gone too.
  assert.deepEqual(await mcpList({}), []);
  assert.deepEqual(await mcpList({ all: true }), [otherSid]);
  assert.deepEqual(await lspList({ all: true }), [otherSid]);
  // A new zero acp neither lists it nor loads it: ACP's not-found error.
  const acp2 = await startAcp(t, m4, home, ws);
  assert.deepEqual(await acp2.list({ cwd: ws }), []);
  const err = await acp2.load(sid).then(() => null, (e) => e);
  assert.equal(err?.code, -32002, JSON.stringify(err));
  assert.match(err.message, new RegExp(`no session ${sid}`));
});

// ---------------------------------------------------------------------------
// One process at a time

test("a session is held by one live process: the others get an error until the holder is killed, then one of them takes it", async (t) => {
  const home = sharedHome(t);
  const ws = tempDir(t);
  const busy = /open in another zero process/;
  const first = "remember the word PLOVER-3";
  // The holder: zero mcp, which made the session.
  const holder = await startMcp(t, await startModel(t, [{ match: "PLOVER-3", content: answer("noted the word") }]), home, ws);
  const out = await holder.call("zero_run", { message: first, workspace: ws });
  const sid = out.session;
  await untilStored(t, home, sid, runEnded(1), "the end of the run");

  const url = await startModel(t, [{ match: "PLOVER-3", content: answer("the word was PLOVER-3") }]);
  // ACP: session/load and session/resume are refused, saying why.
  const acp = await startAcp(t, url, home, ws);
  assert.ok((await acp.list()).some((s) => s.sessionId === sid), "a held session is still listed");
  for (const method of [methods.agent.session.load, methods.agent.session.resume]) {
    const err = await acp.agent.request(method, { sessionId: sid, cwd: ws, mcpServers: [] }).then(() => null, (e) => e);
    assert.ok(err, `${method} of a session another zero holds succeeded`);
    assert.match(JSON.stringify({ message: err.message, data: err.data }), busy, `${method}: ${JSON.stringify(err)}`);
  }
  // LSP: zero/loadSession is refused.
  const lsp = await startLsp(t, url, home, ws);
  assert.ok((await lsp.sessions()).some((s) => s.id === sid), "a held session is still listed");
  await assert.rejects(lsp.conn.sendRequest("zero/loadSession", { sessionId: sid }), (e) => busy.test(e.message));
  // The terminal: zero run --session and zero sessions rm are refused.
  const run = await zeroCli(t, ["run", "--session", sid, "which word was it?"], { url, home, cwd: ws });
  assert.notEqual(run.code, 0, run.stdout);
  assert.match(run.stderr, busy);
  const rm = await zeroCli(t, ["sessions", "rm", sid], { url, home, cwd: ws });
  assert.notEqual(rm.code, 0, rm.stdout);
  assert.match(rm.stderr, busy);
  // The holder goes on meanwhile.
  const status = await holder.callRaw("zero_status", { session: sid });
  assert.ok(!status.isError, JSON.stringify(status.content));

  // kill -9: the claim of a dead process is no claim. ACP takes the session.
  await holder.killHard();
  const replay = await acp.load(sid);
  assert.deepEqual(userText(replay), [first]);
  const from = acp.updates.length;
  assert.equal((await acp.prompt(sid, "which word was it?")).stopReason, "end_turn");
  assert.equal(messageText(acp.of(sid, from)), "the word was PLOVER-3");
  // Now ACP's zero holds it: the MCP face of a new process is refused.
  const other = await startMcp(t, url, home, ws);
  const refused = await other.callRaw("zero_run", { message: "again", session: sid });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, busy);
});

// The faces answer a prompt once the run's end is committed: a kill -9
// right after the answer loses nothing the user saw.
test("the answer a client got survives a kill -9 right after it", async (t) => {
  const tries = 10;
  const url = await startModel(t, Array.from({ length: tries }, () => ({ content: answer("the answer") })));
  const lost = [];
  for (let i = 0; i < tries; i++) {
    const home = sharedHome(t);
    const ws = tempDir(t);
    // Raw ACP, so the kill follows the answer's line with no delay.
    const proc = spawn(ZERO_BIN, ["acp"], { cwd: ws, env: sharedEnv(home, url), stdio: ["pipe", "pipe", "ignore"] });
    t.after(() => { if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL"); });
    const exited = once(proc, "exit");
    const send = (o) => proc.stdin.write(JSON.stringify(o) + "\n");
    let sid;
    await new Promise((resolve, reject) => {
      createInterface({ input: proc.stdout }).on("line", (l) => {
        const m = JSON.parse(l);
        if (m.error) reject(new Error(l));
        if (m.id === 2 && m.result) {
          sid = m.result.sessionId;
          send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: sid, prompt: [{ type: "text", text: "a question" }] } });
        }
        if (m.id === 3 && m.result?.stopReason === "end_turn") {
          proc.kill("SIGKILL");
          resolve();
        }
      });
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
      send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: ws, mcpServers: [] } });
    });
    await exited;
    const ex = await zeroCli(t, ["sessions", "export", sid], { home, cwd: ws });
    assert.equal(ex.code, 0, ex.stderr);
    const types = JSON.parse(ex.stdout).events.map((e) => e.type);
    if (!types.includes("response") || !types.includes("run_ended")) lost.push(types.slice(-3).join(","));
  }
  assert.deepEqual(lost, [], `${lost.length} of ${tries} answered runs lost their end to kill -9`);
});
