// End-to-end tests of `zero mcp` with the official TypeScript MCP client,
// over stdio and over streamable HTTP, against the scripted model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { ZERO_BIN, tempDir, toolReply, answer, startModel, spawnZero, zeroEnv } from "./lib.mjs";

const cmd = (thought, code) => toolReply(thought, "code_execution_tool", { runtime: "terminal", code });

/** An SDK client on `zero mcp` over stdio; closed when the test ends. */
async function stdioClient(t, url, { env, capabilities = {}, cwd } = {}) {
  const transport = new StdioClientTransport({ command: ZERO_BIN, args: ["mcp"], env: zeroEnv(t, url, env), stderr: "pipe", cwd });
  let stderr = "";
  transport.stderr?.on("data", (d) => { stderr += d; });
  const client = new Client({ name: "e2e", version: "1" }, { capabilities });
  t.after(() => client.close());
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`connect: ${e.message}\n${stderr}`);
  }
  client.stderrText = () => stderr;
  return client;
}

async function call(client, name, args, opts) {
  const res = await client.callTool({ name, arguments: args }, undefined, opts);
  assert.ok(!res.isError, `${name} failed: ${JSON.stringify(res.content)}`);
  assert.ok(res.structuredContent, `${name} has no structured content`);
  return res.structuredContent;
}

/** Polls zero_status until cond; returns the last status and every event. */
async function follow(client, session, cond, since = 0) {
  const events = [];
  const end = Date.now() + 20000;
  for (;;) {
    const st = await call(client, "zero_status", { session, since, wait: 2 });
    events.push(...st.events);
    since = st.cursor;
    if (cond(st)) return { st, events };
    if (Date.now() > end) throw new Error(`zero_status never got there: ${JSON.stringify(events.map((e) => e.type))}`);
  }
}
const finished = (st) => !st.running && st.result;

test("stdio: a command runs in the sandbox, events stream before the answer, the session loads back", async (t) => {
  const url = await startModel(t, [
    { match: "say hello", reasoning: "Let me run echo.", content: cmd("run echo", "echo hello-$((6*7))") },
    { match: "hello-42", content: answer("the output was hello-42") },
    { match: "what did you see", content: answer("I saw hello-42") },
  ]);
  const ws = tempDir(t);
  const client = await stdioClient(t, url);
  const { tools } = await client.listTools();
  for (const tool of tools) assert.ok(tool.outputSchema, `${tool.name} has an output schema`);

  const started = await call(client, "zero_start", { message: "say hello", workspace: ws });
  assert.equal(started.intervened, false);
  const { st, events } = await follow(client, started.session, finished, started.cursor);
  assert.equal(st.result.response, "the output was hello-42");
  const at = (pred) => events.findIndex(pred);
  const answerAt = at((e) => e.type === "response");
  assert.ok(answerAt > 0, "the answer is an event");
  for (const [what, pred] of [
    ["reasoning", (e) => e.type === "reasoning_delta"],
    ["thoughts", (e) => e.type === "thoughts_delta"],
    ["tool call", (e) => e.type === "tool_call" && e.kind === "execute"],
    ["live output", (e) => e.type === "tool_output_delta" && e.text.includes("hello-42")],
    ["tool result", (e) => e.type === "tool_result" && e.status === "completed"],
  ]) {
    const i = at(pred);
    assert.ok(i >= 0 && i < answerAt, `${what} arrives before the answer: ${JSON.stringify(events.map((e) => e.type))}`);
  }

  // Loading the session back: it is a resource with its transcript, and it continues.
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r) => r.uri), ["zero://memories", `zero://session/${started.session}`]);
  const read = await client.readResource({ uri: `zero://session/${started.session}` });
  assert.match(read.contents[0].text, /say hello[\s\S]*echo hello[\s\S]*the output was hello-42/);
  const again = await call(client, "zero_run", { message: "what did you see", session: started.session });
  assert.equal(again.response, "I saw hello-42");
  assert.equal(again.run, 2);
  const { sessions } = await call(client, "zero_sessions", {});
  assert.equal(sessions.length, 1);
});

test("stdio: zero_run sends progress and log notifications", async (t) => {
  const url = await startModel(t, [
    { match: "build it", content: cmd("compile things", "echo built-$((1+1))") },
    { match: "built-2", content: answer("all built") },
  ]);
  const ws = tempDir(t);
  const client = await stdioClient(t, url);
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); });
  await client.setLoggingLevel("info");
  const progress = [];
  const out = await call(client, "zero_run", { message: "build it", workspace: ws }, { onprogress: (p) => progress.push(p) });
  assert.equal(out.stop_reason, "response");
  assert.equal(out.response, "all built");
  assert.ok(progress.some((p) => p.message?.includes("compile things")), `progress: ${JSON.stringify(progress)}`);
  assert.ok(logs.some((l) => String(l.data).includes("tool call")), `logs: ${JSON.stringify(logs)}`);
});

test("stdio: a message during a run is an intervention", async (t) => {
  const url = await startModel(t, [
    { match: "long task", content: cmd("working slowly", "echo slow"), chunk_size: 4, hold_after: 6 },
    { match: "also say banana", content: answer("banana noted") },
  ]);
  const ws = tempDir(t);
  const client = await stdioClient(t, url);
  const started = await call(client, "zero_start", { message: "long task", workspace: ws });
  // Its thoughts streaming: the model is mid-reply, held there until the intervention cuts it.
  await follow(client, started.session, (st) => st.events.some((e) => e.type === "thoughts_delta"));
  const reply = await call(client, "zero_reply", { session: started.session, message: "also say banana" });
  assert.equal(reply.intervened, true);
  const { st } = await follow(client, started.session, finished);
  assert.equal(st.result.response, "banana noted");
});

test("stdio: cancel mid-command; two sessions at once", async (t) => {
  const url = await startModel(t, [
    { match: "slow one", content: cmd("sleeping", "sleep 30") },
    { match: "quick one", content: answer("quick done") },
  ]);
  const ws = tempDir(t);
  const client = await stdioClient(t, url);
  const slow = call(client, "zero_run", { message: "slow one", workspace: ws });
  let slowSession;
  const end = Date.now() + 10000;
  while (!slowSession) {
    const { sessions } = await call(client, "zero_sessions", {});
    slowSession = sessions.find((s) => s.running)?.id;
    if (Date.now() > end) throw new Error("the slow run never started");
  }
  await follow(client, slowSession, (st) => st.events.some((e) => e.type === "tool_started"));
  // The other session answers while the first one's call still blocks.
  const quick = await call(client, "zero_run", { message: "quick one", workspace: ws });
  assert.equal(quick.response, "quick done");
  assert.notEqual(quick.session, slowSession);
  const c = await call(client, "zero_cancel", { session: slowSession });
  assert.equal(c.cancelled, true);
  const out = await slow;
  assert.equal(out.stop_reason, "cancelled");
});

test("stdio: approvals granted by elicitation and refused with zero_approve", async (t) => {
  const replies = [
    { match: "risky", content: cmd("risky step", "echo approved-$((40+2))") },
    { match: "approved-42", content: answer("ran it") },
    { match: "refused by", content: answer("was refused") },
  ];
  // Granted through elicitation: the client advertised it.
  {
    const client = await stdioClient(t, await startModel(t, replies), { env: { ZERO_APPROVAL: "ask" }, capabilities: { elicitation: {} } });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, (req) => { asked.push(req.params.message); return { action: "accept", content: {} }; });
    const out = await call(client, "zero_run", { message: "risky", workspace: tempDir(t) });
    assert.equal(out.response, "ran it");
    assert.equal(asked.length, 1);
  }
  // Refused through zero_approve: no elicitation, the approval waits in zero_status.
  {
    const client = await stdioClient(t, await startModel(t, replies), { env: { ZERO_APPROVAL: "ask" } });
    const started = await call(client, "zero_start", { message: "risky", workspace: tempDir(t) });
    const { st } = await follow(client, started.session, (st) => st.pending_approvals.length > 0);
    const [req] = st.pending_approvals;
    assert.equal(req.tool, "code_execution_tool");
    const ans = await call(client, "zero_approve", { id: req.id, approve: false, reason: "refused by the user" });
    assert.equal(ans.approved, false);
    const done = await follow(client, started.session, finished);
    assert.equal(done.st.result.response, "was refused");
  }
  // Granted through zero_approve.
  {
    const client = await stdioClient(t, await startModel(t, replies), { env: { ZERO_APPROVAL: "ask" } });
    const started = await call(client, "zero_start", { message: "risky", workspace: tempDir(t) });
    const { st } = await follow(client, started.session, (st) => st.pending_approvals.length > 0);
    await call(client, "zero_approve", { id: st.pending_approvals[0].id, approve: true });
    const done = await follow(client, started.session, finished);
    assert.equal(done.st.result.response, "ran it");
  }
});

test("http: bearer token required; a run over streamable HTTP", async (t) => {
  const url = await startModel(t, [
    { match: "build it", content: cmd("compile things", "echo built-$((1+1))") },
    { match: "built-2", content: answer("all built") },
  ]);
  const { proc, endpoint, token } = await httpZero(t, url);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
  for (const auth of [undefined, "Bearer wrong"]) {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (auth) headers.authorization = auth;
    const res = await fetch(endpoint, { method: "POST", headers, body });
    assert.equal(res.status, 401, `Authorization ${auth}`);
  }
  const client = await httpClient(t, endpoint, token);
  const errors = [];
  client.onerror = (e) => errors.push(String(e));
  const progress = [];
  const out = await call(client, "zero_run", { message: "build it", workspace: tempDir(t) }, { onprogress: (p) => progress.push(p) });
  assert.equal(out.response, "all built");
  assert.ok(progress.length > 0, "progress over HTTP");
  await call(client, "zero_sessions", {}); // one more round trip for anything late
  assert.deepEqual(errors.filter((e) => /unknown/.test(e)), [], "messages for a request the SDK had forgotten");
  await client.close();
  proc.kill("SIGTERM");
  const [code] = await once(proc, "exit");
  assert.ok(code === 0 || code === null || code === 130 || code === 143, `exit code ${code}: ${proc.stderrText()}`);
});

/** zero mcp --http on a free loopback port: the process, its endpoint and token. */
async function httpZero(t, url) {
  const token = "e2e-secret-token";
  const proc = spawnZero(t, ["mcp", "--http", "127.0.0.1:0"], { url, env: { ZERO_MCP_TOKEN: token } });
  const lines = createInterface({ input: proc.stderr });
  let endpoint;
  for await (const line of lines) {
    const m = line.match(/zero mcp: listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    if (m) { endpoint = m[1]; break; }
  }
  assert.ok(endpoint, `no listening line: ${proc.stderrText()}`);
  return { proc, endpoint, token };
}

/** The SDK's client over streamable HTTP. */
async function httpClient(t, endpoint, token) {
  const client = new Client({ name: "e2e-http", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

test("stdio robustness: malformed line, unknown method, bad arguments, EOF", async (t) => {
  const url = await startModel(t, []);
  const proc = spawnZero(t, ["mcp"], { url });
  const out = createInterface({ input: proc.stdout });
  const pending = [];
  const got = [];
  out.on("line", (l) => { got.push(JSON.parse(l)); pending.shift()?.(); });
  const next = async () => {
    if (got.length === 0) await new Promise((r) => pending.push(r));
    return got.shift();
  };
  const send = (s) => proc.stdin.write(s + "\n");

  send('{"jsonrpc":"2.0","id":1,"method":"initialize"');
  assert.equal((await next()).error?.code, -32700);
  send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }));
  assert.ok((await next()).result?.serverInfo, "initialize after a malformed line");
  send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "no/such/method" }));
  assert.equal((await next()).error?.code, -32601);
  send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "zero_start", arguments: { message: "x", workspace: "relative/dir" } } }));
  const bad = await next();
  assert.equal(bad.result?.isError, true);
  assert.match(bad.result.content[0].text, /^workspace: must be an absolute path/);
  send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "zero_status", arguments: { session: 7 } } }));
  assert.match((await next()).result.content[0].text, /^session: must be a string/);

  const t0 = Date.now();
  proc.stdin.end();
  await once(proc, "exit");
  assert.ok(Date.now() - t0 < 2000, `exited after ${Date.now() - t0} ms`);
});

test("stdio: a client that cannot be asked gets zero_run back at once with the approval to give", async (t) => {
  const replies = [
    { match: "risky", content: cmd("risky step", "echo approved-$((40+2))") },
    { match: "approved-42", content: answer("ran it") },
  ];
  const client = await stdioClient(t, await startModel(t, replies), { env: { ZERO_APPROVAL: "ask" } });
  const out = await call(client, "zero_run", { message: "risky", workspace: tempDir(t) });
  assert.equal(out.stop_reason, "approval_required");
  assert.equal(out.pending_approvals.length, 1);
  assert.equal(out.next.tool, "zero_approve");
  await call(client, "zero_approve", out.next.arguments);
  const done = await follow(client, out.session, finished, out.cursor);
  assert.equal(done.st.result.response, "ran it");
});

test("stdio: a client declining every elicitation gets the refusal, the run ends", async (t) => {
  const replies = [
    { match: "risky", content: cmd("risky step", "echo approved-$((40+2))") },
    { match: "refused by", content: answer("was refused") },
  ];
  const client = await stdioClient(t, await startModel(t, replies), { env: { ZERO_APPROVAL: "ask" }, capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: "decline" }));
  const out = await call(client, "zero_run", { message: "risky", workspace: tempDir(t) });
  assert.equal(out.response, "was refused");
});

test("stdio: arguments a client adds of its own are ignored", async (t) => {
  const client = await stdioClient(t, await startModel(t, [{ content: answer("fine") }]));
  const out = await call(client, "zero_run", { message: "hi", workspace: tempDir(t), wait_for_previous: true });
  assert.equal(out.response, "fine");
});

for (const transport of ["stdio", "http"]) {
  test(`${transport}: a cancelled zero_run is not answered, and the connection goes on`, async (t) => {
    const url = await startModel(t, [{ match: "slow one", content: cmd("sleeping", "sleep 30") }]);
    let client;
    if (transport === "stdio") {
      client = await stdioClient(t, url);
    } else {
      const { endpoint, token } = await httpZero(t, url);
      client = await httpClient(t, endpoint, token);
    }
    await cancelledRun(t, client);
  });
}

async function cancelledRun(t, client) {
  const unknown = [];
  client.onerror = (e) => unknown.push(String(e));
  const ac = new AbortController();
  let progressed = false;
  const run = client.callTool({ name: "zero_run", arguments: { message: "slow one", workspace: tempDir(t) } }, undefined,
    { signal: ac.signal, onprogress: () => { progressed = true; } }).catch((e) => e);
  const sessions = async () => (await call(client, "zero_sessions", {})).sessions;
  // Cancel once the command runs (its headline came as progress): a
  // progress zero had written before it read the cancellation would reach
  // the SDK after it forgot the token, a race no server can close.
  for (const end = Date.now() + 20000; !progressed || !(await sessions()).some((s) => s.running);) {
    if (Date.now() > end) throw new Error("the run never started");
    await new Promise((r) => setTimeout(r, 50));
  }
  ac.abort("the user pressed Esc");
  await run;
  for (const end = Date.now() + 20000; (await sessions()).some((s) => s.running);) {
    if (Date.now() > end) throw new Error("the run was not cancelled");
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 300));
  await call(client, "zero_sessions", {});
  assert.deepEqual(unknown, [], "the SDK reported messages for a request it had forgotten");
}

test("stdio: the workspace's saved commands are prompts, as Claude Code starts zero mcp (its cwd the project)", async (t) => {
  const url = await startModel(t, []);
  const ws = tempDir(t);
  const { mkdirSync, writeFileSync } = await import("node:fs");
  mkdirSync(`${ws}/.claude/commands/git`, { recursive: true });
  writeFileSync(`${ws}/.claude/commands/review.md`, "---\ndescription: Review a file\nargument-hint: [file]\n---\nReview $1 carefully.\n");
  writeFileSync(`${ws}/.claude/commands/git/commit.md`, "Write the commit message for $ARGUMENTS.\n");
  const client = await stdioClient(t, url, { cwd: ws });
  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => [p.name, p.description, p.arguments?.map((a) => a.name)]), [
    ["git:commit", "Write the commit message for $ARGUMENTS. (.claude/commands/git/commit.md)", ["arguments"]],
    ["review", "Review a file (.claude/commands/review.md)", ["arguments"]],
  ]);
  const got = await client.getPrompt({ name: "review", arguments: { arguments: "main.go" } });
  assert.deepEqual(got.messages, [{ role: "user", content: { type: "text", text: "Review main.go carefully." } }]);
});

// A 2×2 PNG, as an editor would paste it.
const PASTED_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAG0lEQVR4nGL6z8DA8J+BhZHh/38GBkAAAAD//x0vBATwkV0VAAAAAElFTkSuQmCC";
const sha256 = (b64) => createHash("sha256").update(Buffer.from(b64, "base64")).digest("hex");
// The scripted model's transcript names each image a request carries by
// its hash: a reply matching it is given only if the image reached the
// model (a small PNG is sent byte for byte).
const sent = (b64) => `[image image/png sha256:${sha256(b64)}]`;

test("stdio: zero_run takes an image as MCP image content and the model is sent it; a bad one is refused", async (t) => {
  const url = await startModel(t, [{ match: sent(PASTED_PNG), content: answer("four pixels: red, green, blue and white") }]);
  const client = await stdioClient(t, url);
  const { tools } = await client.listTools();
  const run = tools.find((tl) => tl.name === "zero_run");
  assert.equal(run.inputSchema.properties.images.type, "array");
  assert.equal(run.inputSchema.properties.attach.type, "array");
  const ws = tempDir(t);
  const out = await call(client, "zero_run", { message: "What colours?", workspace: ws,
    images: [{ type: "image", data: PASTED_PNG, mimeType: "image/png" }] });
  assert.equal(out.response, "four pixels: red, green, blue and white");
  const st = await call(client, "zero_status", { session: out.session });
  const started = st.events.find((e) => e.type === "run_started");
  assert.equal(started.images?.[0]?.sha256, sha256(PASTED_PNG), JSON.stringify(started));

  const bad = await client.callTool({ name: "zero_run", arguments: { message: "And this?", session: out.session,
    images: [{ type: "image", data: "%%%", mimeType: "image/png" }] } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /images\[0\]: data is not valid base64/);
  const outside = await client.callTool({ name: "zero_run", arguments: { message: "And this?", session: out.session, attach: ["../x.png"] } });
  assert.equal(outside.isError, true);
  assert.match(outside.content[0].text, /attach\[0\].*outside the workspace/);
});

test("stdio: an MCP server's tool returns an image: the model is sent it, and zero_run returns it", async (t) => {
  const { SHOT_PNG, SERVER_PATH } = await import("./images-mcp-server.mjs");
  const url = await startModel(t, [
    { match: "Take a screenshot", content: toolReply("look at the app", "pics.shot", {}) },
    { match: sent(SHOT_PNG), content: answer("the window is blue") },
  ]);
  const config = tempDir(t, "zero-config-");
  mkdirSync(join(config, "zero"));
  writeFileSync(join(config, "zero", "config.yaml"),
    `mcp_servers:\n  pics:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SERVER_PATH)}]\n`);
  const client = await stdioClient(t, url, { env: { XDG_CONFIG_HOME: config } });
  const res = await client.callTool({ name: "zero_run", arguments: { message: "Take a screenshot of the app", workspace: tempDir(t) } });
  assert.ok(!res.isError, JSON.stringify(res.content));
  assert.equal(res.structuredContent.response, "the window is blue", client.stderrText());
  const images = res.content.filter((c) => c.type === "image");
  assert.deepEqual(images.map((c) => [c.mimeType, c.data]), [["image/png", SHOT_PNG]]);
  assert.equal(res.structuredContent.images?.[0]?.sha256, sha256(SHOT_PNG));
});
