// End-to-end tests of zero driven by two real clients as they ship on npm,
// run from node_modules/.bin as a user would run them: the MCP Inspector's
// command line (`inspector --cli`) against `zero mcp`, and acpx, the
// headless ACP client, against `zero acp`. Zero runs on its default
// approval setting (no --approval, no ZERO_APPROVAL: `approval: sandbox`)
// unless a test says otherwise, against the scripted model.
//
// The sandbox stays the local backend (ZERO_SANDBOX=local, as in every test
// here): `auto`, the default, is the same thing on a machine without a
// Docker engine, and a Docker sandbox would have to pull its image.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { ZERO_BIN, tempDir, toolReply, answer, startModel, spawnZero, zeroEnv, until, findByArg, gone } from "./lib.mjs";

const BIN = join(dirname(fileURLToPath(import.meta.url)), "node_modules", ".bin");
const INSPECTOR = join(BIN, "mcp-inspector");
const ACPX = join(BIN, "acpx");

// A node_modules installed before these clients were added lacks them.
const missing = [INSPECTOR, ACPX].filter((f) => !existsSync(f));
if (missing.length > 0 && process.env.ZERO_REQUIRE_NODE === "1") {
  throw new Error(`${missing.join(", ")} missing: run npm ci in e2e`);
}

// A guard, never an expectation: each client call ends in about a second.
const GUARD_MS = 25000;
const opts = { timeout: 60000, skip: missing.length > 0 && `${missing.join(", ")} missing: run npm ci in e2e` };

const cmd = (thought, code) => toolReply(thought, "code_execution_tool", { runtime: "terminal", code });

// The task of most tests: one command whose output proves it ran (the shell
// computes 42, and writes the file only if it really ran in the workspace),
// then an answer scripted to come only once the model saw that output.
const GREET = "echo hi-$((6*7)) | tee greeting.txt";
const greeting = (extra = []) => [
  { match: "greet the user", content: cmd("run the greeting", GREET) },
  { match: "hi-42", content: answer("the output was hi-42") },
  ...extra,
];

/**
 * Whether bubblewrap can confine commands here, probed as zero probes it.
 * It decides what `approval: sandbox` does on the local backend: no
 * asking under bubblewrap, an approval before each command without it.
 */
function bwrapConfines() {
  const r = spawnSync("bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--as-pid-1",
    "--unshare-net", "--", "/bin/sh", "-c", "exit 0"], { stdio: "ignore", timeout: 10000 });
  return r.status === 0;
}

/** zeroEnv with zero's own default approval (no ZERO_APPROVAL at all), then env. */
function defaultEnv(t, url, env = {}) {
  const e = zeroEnv(t, url);
  delete e.ZERO_APPROVAL;
  return { ...e, ...env };
}

/**
 * A workspace whose zero processes (each has it on its command line) are
 * killed when the test ends, should a client have left one behind.
 */
function workspace(t) {
  const ws = tempDir(t);
  t.after(async () => {
    for (let pid, tries = 0; (pid = findByArg(ws)) !== 0 && tries < 50; tries++) {
      try { process.kill(pid, "SIGKILL"); } catch { /* it ended meanwhile */ }
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  return ws;
}

/**
 * Runs a client binary to its end with stdin at /dev/null (no terminal, as
 * in CI). Resolves {code, stdout, stderr}; killed (with what it started in
 * its process group) after GUARD_MS, or when the test ends before it did.
 */
function runClient(t, file, args, { env, cwd }) {
  const proc = spawn(file, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let ended = false;
  const killGroup = () => { if (!ended) try { process.kill(-proc.pid, "SIGKILL"); } catch { /* gone */ } };
  t.after(killGroup);
  proc.on("exit", () => { ended = true; });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d) => { stdout += d; });
  proc.stderr.on("data", (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      killGroup();
      reject(new Error(`${file} ${args.join(" ")} did not end within ${GUARD_MS} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, GUARD_MS);
    proc.on("error", (e) => { clearTimeout(guard); reject(e); });
    proc.on("close", (code, signal) => { clearTimeout(guard); resolve({ code, signal, stdout, stderr }); });
  });
}

// ---------------------------------------------------------------------------
// MCP Inspector CLI

/** `-e KEY=VALUE` for each variable: the Inspector gives a stdio server only these and its defaults. */
const eFlags = (env) => Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);

/**
 * One `inspector --cli ... --format json` call; its stdout is one JSON
 * object, {result} or {error}. target is the server: a command line after
 * `--`, or ["--server-url", url, "--header", ...].
 */
async function inspector(t, { env, cwd, target, args }) {
  const out = await runClient(t, INSPECTOR, ["--cli", "--format", "json", ...args, ...target], { env, cwd });
  let json;
  try {
    json = JSON.parse(out.stdout);
  } catch {
    // An error envelope goes to stderr.
    try { json = JSON.parse(out.stderr.trim().split("\n").pop()); } catch { json = null; }
  }
  return { ...out, json };
}

/** A stdio target: zero mcp, its environment passed with -e, its workspace on its command line (so a leftover can be found). */
const stdioTarget = (env, ws) => [...eFlags(env), "--", ZERO_BIN, "mcp", "--workspace", ws];

const ZERO_TOOLS = ["zero_start", "zero_status", "zero_reply", "zero_approve", "zero_cancel", "zero_sessions", "zero_trust", "zero_run"];

test("inspector --cli: tools/list names zero's tools, and --strict finds no schema portability errors", opts, async (t) => {
  const url = await startModel(t, []);
  const ws = workspace(t);
  const env = defaultEnv(t, url);
  const out = await inspector(t, { env, cwd: ws, target: stdioTarget(env, ws), args: ["--strict", "--method", "tools/list"] });
  assert.equal(out.code, 0, `exit ${out.code}\n${out.stdout}\n${out.stderr}`);
  const tools = out.json.result.tools;
  const names = tools.map((x) => x.name);
  for (const name of ZERO_TOOLS) assert.ok(names.includes(name), `${name} missing from ${names.join(", ")}`);
  const run = tools.find((x) => x.name === "zero_run");
  assert.ok(run.inputSchema.required.includes("message"), JSON.stringify(run.inputSchema));
  assert.ok(run.outputSchema, "zero_run has an output schema");
  await until(() => findByArg(ws) === 0, 10000, "zero to exit after the Inspector");
});

test("inspector --cli: zero_run on the default approval setting runs the command, or returns at once with the approval to give", opts, async (t) => {
  const confined = bwrapConfines();
  t.diagnostic(confined ? "bubblewrap confines commands here: zero should not ask" : "no working bubblewrap here: zero should ask");
  const url = await startModel(t, greeting());
  const ws = workspace(t);
  const env = defaultEnv(t, url);
  const out = await inspector(t, {
    env, cwd: ws, target: stdioTarget(env, ws),
    args: ["--method", "tools/call", "--tool-name", "zero_run", "--tool-arg", "message=greet the user", `workspace=${ws}`],
  });
  assert.equal(out.code, 0, `exit ${out.code}\n${out.stdout}\n${out.stderr}`);
  const res = out.json.result;
  const r = res.structuredContent;
  if (confined) {
    // bubblewrap confines the command: approval "sandbox" does not ask.
    assert.equal(r.stop_reason, "response", `bubblewrap works here, so zero should not ask: ${JSON.stringify(r)}`);
    assert.equal(r.response, "the output was hi-42");
    assert.match(res.content[0].text, /^the output was hi-42/);
    assert.equal(readFileSync(join(ws, "greeting.txt"), "utf8"), "hi-42\n");
  } else {
    // Unconfined: zero asks, and the Inspector offers no elicitation.
    assert.equal(r.stop_reason, "approval_required", `no bubblewrap here, so zero should ask: ${JSON.stringify(r)}`);
    assert.equal(r.pending_approvals.length, 1);
    assert.equal(r.pending_approvals[0].tool, "code_execution_tool");
    assert.equal(r.pending_approvals[0].subject, GREET);
    assert.deepEqual(r.next, { tool: "zero_approve", arguments: { id: r.pending_approvals[0].id, approve: true } });
    assert.match(res.content[0].text, /zero_approve/);
    assert.equal(existsSync(join(ws, "greeting.txt")), false, "the command ran before its approval");
  }
  // The Inspector closed zero's stdin on its way out: no zero stays behind,
  // even one holding a pending approval.
  await until(() => findByArg(ws) === 0, 10000, "zero to exit after the Inspector");
});

test("inspector --cli over HTTP: the approval comes back with `next`, later Inspector calls approve it and follow the run", opts, async (t) => {
  const url = await startModel(t, greeting());
  const ws = workspace(t);
  const token = "e2e-inspector-token";
  // approval "ask" (ZERO_APPROVAL, documented) makes zero ask on any machine.
  const proc = spawnZero(t, ["mcp", "--http", "127.0.0.1:0", "--workspace", ws], { url, env: { ZERO_MCP_TOKEN: token, ZERO_APPROVAL: "ask" } });
  let endpoint;
  for await (const line of createInterface({ input: proc.stderr })) {
    const m = line.match(/zero mcp: listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    if (m) { endpoint = m[1]; break; }
  }
  assert.ok(endpoint, `no listening line: ${proc.stderrText()}`);
  const env = defaultEnv(t, url); // the Inspector's own HOME and PATH
  const call = (tool, toolArgs, target = ["--server-url", endpoint, "--header", `Authorization: Bearer ${token}`]) =>
    inspector(t, { env, cwd: ws, target, args: ["--method", "tools/call", "--tool-name", tool, "--tool-arg", ...toolArgs] });

  // Without the token the Inspector is refused, and says what zero said.
  const refused = await call("zero_run", ["message=greet the user"], ["--server-url", endpoint, "--stored-auth-only"]);
  assert.notEqual(refused.code, 0, refused.stdout);
  assert.match(JSON.stringify(refused.json), /missing or wrong bearer token/);

  // The Inspector cannot be asked: zero_run returns at once with the approval and the call to make.
  const first = await call("zero_run", ["message=greet the user", `workspace=${ws}`]);
  assert.equal(first.code, 0, `exit ${first.code}\n${first.stdout}\n${first.stderr}`);
  const r = first.json.result.structuredContent;
  assert.equal(r.stop_reason, "approval_required", JSON.stringify(r));
  assert.equal(r.pending_approvals.length, 1);
  const [req] = r.pending_approvals;
  assert.equal(req.tool, "code_execution_tool");
  assert.equal(req.subject, GREET);
  assert.deepEqual(r.next, { tool: "zero_approve", arguments: { id: req.id, approve: true } });
  assert.match(first.json.result.content[0].text, new RegExp(`zero_approve \\{id: "${req.id}"`));
  assert.equal(existsSync(join(ws, "greeting.txt")), false, "the command ran before its approval");

  // A second Inspector process, a new MCP connection, answers it: approve=true
  // is typed on the command line, the Inspector makes a boolean of it.
  const approved = await call("zero_approve", [`id=${r.next.arguments.id}`, "approve=true"]);
  assert.equal(approved.code, 0, `exit ${approved.code}\n${approved.stdout}\n${approved.stderr}`);
  assert.deepEqual(approved.json.result.structuredContent, { id: req.id, approved: true });

  // A third (and more) follow the run with zero_status to its end.
  const events = [];
  let since = r.cursor;
  let st;
  for (const end = Date.now() + 20000; ;) {
    const s = await call("zero_status", [`session=${r.session}`, `since=${since}`, "wait=5"]);
    assert.equal(s.code, 0, `exit ${s.code}\n${s.stdout}\n${s.stderr}`);
    st = s.json.result.structuredContent;
    events.push(...st.events);
    since = st.cursor;
    if (!st.running && st.result) break;
    if (Date.now() > end) throw new Error(`the run did not end: ${JSON.stringify(events.map((e) => e.type))}`);
  }
  assert.equal(st.result.stop_reason, "response");
  assert.equal(st.result.response, "the output was hi-42");
  assert.deepEqual(st.pending_approvals, []);
  assert.ok(events.some((e) => e.type === "approval_resolved" && e.status === "approved"), JSON.stringify(events));
  assert.ok(events.some((e) => e.type === "tool_output_delta" && e.text.includes("hi-42")), JSON.stringify(events));
  assert.equal(readFileSync(join(ws, "greeting.txt"), "utf8"), "hi-42\n");
});

// ---------------------------------------------------------------------------
// acpx

/**
 * An acpx environment: a private HOME (acpx keeps ~/.acpx there and a
 * socket folder in /tmp named after it, removed when the test ends).
 */
function acpxEnv(t, url, env) {
  const e = defaultEnv(t, url, env);
  t.after(() => rmSync(join("/tmp", `acpx-${createHash("sha256").update(e.HOME).digest("hex").slice(0, 10)}`), { recursive: true, force: true }));
  return e;
}

/** The custom agent command acpx starts: zero acp, its workspace on its command line. */
const agentCmd = (ws) => `${ZERO_BIN} acp --workspace ${ws}`;

/** `acpx --agent "zero acp" [flags] ...args` in ws, on acpx's own permission defaults unless flags say. */
const acpx = (t, { env, ws, flags = [], args }) =>
  runClient(t, ACPX, ["--agent", agentCmd(ws), "--cwd", ws, ...flags, ...args], { env, cwd: ws });

/** The ACP messages of `--format json` output (one JSON-RPC message a line). */
const wire = (stdout) => stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
const updates = (msgs) => msgs.filter((m) => m.method === "session/update").map((m) => m.params.update);
const messageText = (us) => us.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
const toolText = (us) => us.filter((u) => u.sessionUpdate === "tool_call_update" && u.content)
  .flatMap((u) => u.content).map((c) => c.content?.text ?? "").join("");
const stopReason = (msgs) => msgs.find((m) => m.result?.stopReason)?.result.stopReason;

/**
 * The permission requests zero sent and the answers acpx gave, in order
 * (each side numbers its own requests: the answer is the next message
 * with the request's id and an outcome).
 */
function permissions(msgs) {
  return msgs.flatMap((req, i) => (req.method !== "session/request_permission" ? [] : [{
    req: req.params,
    outcome: msgs.slice(i + 1).find((m) => m.id === req.id && !m.method && m.result?.outcome)?.result.outcome,
  }]));
}

test("acpx exec on the default approval setting runs a command through zero", opts, async (t) => {
  const confined = bwrapConfines();
  t.diagnostic(confined ? "bubblewrap confines commands here: zero should not ask" : "no working bubblewrap here: zero should ask");
  const url = await startModel(t, greeting([{ match: "The user refused this call", content: answer("it was refused") }]));
  const ws = workspace(t);
  const env = acpxEnv(t, url);
  const out = await acpx(t, { env, ws, flags: ["--format", "json"], args: ["exec", "greet the user"] });
  const msgs = wire(out.stdout);
  const us = updates(msgs);
  const asked = permissions(msgs);
  assert.equal(stopReason(msgs), "end_turn", out.stdout + out.stderr);
  const call = us.find((u) => u.sessionUpdate === "tool_call");
  assert.equal(call.kind, "execute");
  assert.deepEqual(call.rawInput, { runtime: "terminal", code: GREET });
  if (confined) {
    assert.equal(out.code, 0, `exit ${out.code}\n${out.stderr}`);
    assert.deepEqual(asked, [], "bubblewrap works here, so zero should not ask");
    assert.ok(us.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed"));
    assert.match(toolText(us), /hi-42/);
    assert.equal(messageText(us), "the output was hi-42");
    assert.equal(readFileSync(join(ws, "greeting.txt"), "utf8"), "hi-42\n");
  } else {
    // zero asks; acpx, on its defaults (approve-reads, no terminal to ask
    // on), rejects an execute, and exits 5 (permission denied).
    assert.equal(out.code, 5, `exit ${out.code}\n${out.stderr}`);
    assert.equal(asked.length, 1, "no bubblewrap here, so zero should ask");
    assert.equal(asked[0].req.toolCall.kind, "execute");
    assert.deepEqual(asked[0].outcome, { outcome: "selected", optionId: "reject_once" });
    assert.match(toolText(us), /The user refused this call/);
    assert.equal(messageText(us), "it was refused");
    assert.equal(existsSync(join(ws, "greeting.txt")), false);
  }
  await until(() => findByArg(ws) === 0, 10000, "zero to exit after acpx");
});

test("acpx exec when zero asks: its default rejects the command, --approve-all lets it run", opts, async (t) => {
  const ws = workspace(t);
  // approval "ask": zero asks before the command on any machine.
  {
    const url = await startModel(t, greeting([{ match: "The user refused this call", content: answer("it was refused") }]));
    const env = acpxEnv(t, url, { ZERO_APPROVAL: "ask" });
    const out = await acpx(t, { env, ws, flags: ["--format", "json"], args: ["exec", "greet the user"] });
    const msgs = wire(out.stdout);
    const us = updates(msgs);
    const asked = permissions(msgs);
    assert.equal(out.code, 5, `acpx reports the denial: exit ${out.code}\n${out.stderr}`);
    assert.equal(stopReason(msgs), "end_turn");
    assert.equal(asked.length, 1);
    const { req, outcome } = asked[0];
    assert.equal(req.toolCall.kind, "execute");
    assert.deepEqual(req.toolCall.rawInput, { runtime: "terminal", code: GREET });
    assert.deepEqual(req.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
    assert.deepEqual(outcome, { outcome: "selected", optionId: "reject_once" });
    assert.ok(us.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed"));
    assert.match(toolText(us), /The user refused this call/);
    assert.equal(messageText(us), "it was refused");
    assert.equal(existsSync(join(ws, "greeting.txt")), false);
  }
  {
    const url = await startModel(t, greeting());
    const env = acpxEnv(t, url, { ZERO_APPROVAL: "ask" });
    const out = await acpx(t, { env, ws, flags: ["--approve-all", "--format", "json"], args: ["exec", "greet the user"] });
    const msgs = wire(out.stdout);
    const us = updates(msgs);
    const asked = permissions(msgs);
    assert.equal(out.code, 0, `exit ${out.code}\n${out.stderr}`);
    assert.equal(asked.length, 1);
    assert.deepEqual(asked[0].outcome, { outcome: "selected", optionId: "allow_once" });
    assert.ok(us.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed"));
    assert.match(toolText(us), /hi-42/);
    assert.equal(messageText(us), "the output was hi-42");
    assert.equal(readFileSync(join(ws, "greeting.txt"), "utf8"), "hi-42\n");
  }
  await until(() => findByArg(ws) === 0, 10000, "zero to exit after acpx");
});

test("acpx: a saved session whose zero has gone is resumed by a new zero; an unknown id is zero's error", opts, async (t) => {
  const ws = workspace(t);
  // Answers without commands: what happens with commands is the tests' above.
  // The second answer is only for a request that carries the first turn's
  // PELICAN-7, which only the first prompt said: the resumed session's
  // history went to the model.
  const url = await startModel(t, [
    { match: "greet the user", content: answer("hello, I will remember") },
    { match: "PELICAN-7", content: answer("you told me PELICAN-7") },
  ]);
  const env = acpxEnv(t, url);
  const notFound = /Resource not found: no session (\w+) \(it was deleted, or made with another data directory\); start a new session/;

  // Asked for by id, a session no zero ever made: acpx fails with zero's
  // message (exit 4, no session).
  const unknown = "0123456789abcdef";
  const explicit = await acpx(t, { env, ws, args: ["sessions", "new", "--name", "old", "--resume-session", unknown] });
  assert.equal(explicit.code, 4, `exit ${explicit.code}\n${explicit.stdout}\n${explicit.stderr}`);
  assert.match(explicit.stderr, new RegExp(`Failed to resume ACP session ${unknown}: `));
  assert.equal(explicit.stderr.match(notFound)?.[1], unknown, explicit.stderr);
  const asJson = await acpx(t, { env, ws, flags: ["--format", "json"], args: ["sessions", "new", "--name", "old2", "--resume-session", unknown] });
  assert.equal(asJson.code, 4);
  const err = wire(asJson.stdout).find((m) => m.error)?.error;
  assert.equal(err?.code, -32002, asJson.stdout);
  assert.match(err.message, notFound);

  // acpx's queue owners (each starts a zero) are killed when the test ends
  // should one outlive its 1 s idle TTL.
  const queues = join(env.HOME, ".acpx", "queues");
  const owners = () => (existsSync(queues) ? readdirSync(queues) : []).filter((f) => f.endsWith(".lock"))
    .map((f) => { try { return JSON.parse(readFileSync(join(queues, f), "utf8")).pid; } catch { return 0; } }).filter(Boolean);
  const seen = new Set();
  t.after(() => {
    for (const pid of seen) {
      // Still acpx's queue owner (not a later process with its pid)?
      let argv = "";
      try { argv = readFileSync(`/proc/${pid}/cmdline`, "latin1"); } catch { /* gone */ }
      if (!gone(pid) && argv.includes("__queue-owner")) process.kill(pid, "SIGKILL");
    }
  });
  const allGone = (what) => until(() => [...seen].every(gone) && findByArg(ws) === 0, 15000, what);

  // A saved session, then a first turn in it; each acpx call's zero is gone
  // before the next starts.
  const created = await acpx(t, { env, ws, flags: ["--ttl", "1"], args: ["sessions", "new"] });
  assert.equal(created.code, 0, created.stderr);
  const recordId = created.stdout.trim();
  const recordFile = join(env.HOME, ".acpx", "sessions", `${recordId}.json`);
  const before = JSON.parse(readFileSync(recordFile, "utf8"));
  await until(() => findByArg(ws) === 0, 10000, "the zero of `sessions new` to exit");
  const first = await acpx(t, { env, ws, flags: ["--ttl", "1"], args: ["prompt", "greet the user; remember PELICAN-7"] });
  for (const pid of owners()) seen.add(pid);
  assert.equal(first.code, 0, `exit ${first.code}\n${first.stderr}`);
  assert.match(first.stdout, /hello, I will remember/);
  await allGone("acpx's queue owner and zero to exit after the first prompt");

  // A new zero process resumes the saved session: the follow-up runs in the
  // same zero session, and the model sees the earlier turn.
  const next = await acpx(t, { env, ws, flags: ["--ttl", "1", "--verbose", "--format", "json"], args: ["prompt", "what did I ask you to remember?"] });
  for (const pid of owners()) seen.add(pid);
  assert.equal(next.code, 0, `exit ${next.code}\n${next.stdout}\n${next.stderr}`);
  assert.doesNotMatch(next.stderr, /session reconnect failed/, next.stderr);
  const msgs = wire(next.stdout);
  const resume = msgs.find((m) => m.method === "session/resume" || m.method === "session/load");
  assert.ok(resume, `acpx did not reattach:\n${next.stdout}`);
  assert.equal(resume.params.sessionId, before.acp_session_id);
  const answered = msgs.find((m) => m.id === resume.id && !m.method);
  assert.ok(answered?.result && !answered.error, `zero refused the ${resume.method}: ${JSON.stringify(answered)}`);
  assert.ok(!msgs.some((m) => m.method === "session/new"), "acpx started a fresh session");
  const prompt = msgs.find((m) => m.method === "session/prompt");
  assert.equal(prompt.params.sessionId, before.acp_session_id);
  const turn = msgs.slice(msgs.indexOf(prompt));
  assert.equal(stopReason(turn), "end_turn");
  assert.equal(messageText(updates(turn)), "you told me PELICAN-7");
  const after = JSON.parse(readFileSync(recordFile, "utf8"));
  assert.equal(after.acpx_record_id, recordId);
  assert.equal(after.acp_session_id, before.acp_session_id, "acpx kept its record on the same zero session");
  // acpx's queue owner ends after its 1 s idle TTL, and zero with it.
  await allGone("acpx's queue owner and zero to exit");
});
