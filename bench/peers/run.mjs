#!/usr/bin/env node
// The peer benchmark: Zero and its peers measured the same way, in the same
// run, against the same scripted model server (cmd/fakellm). See README.md
// for what each figure means. Run through scripts/peers, which builds the
// binaries; by hand:
//
//	ZERO_BIN=… FAKELLM_BIN=… node run.mjs [--starts 10] [--turns 20] [--oneshots 10] [--requests-turns 5] [--only zero-acp,…]
//
// The table goes to stdout; progress and failures to stderr.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { client as acpClient, ndJsonStream, methods } from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = dirname(fileURLToPath(import.meta.url));
const { values: opt } = parseArgs({
  options: {
    starts: { type: "string", default: process.env.PEERS_STARTS ?? "10" },
    turns: { type: "string", default: process.env.PEERS_TURNS ?? "20" },
    oneshots: { type: "string", default: process.env.PEERS_ONESHOTS ?? "10" },
    "requests-turns": { type: "string", default: process.env.PEERS_REQUESTS_TURNS ?? "5" },
    only: { type: "string", default: process.env.PEERS_ONLY ?? "" },
  },
});
const STARTS = Number(opt.starts), TURNS = Number(opt.turns), ONESHOTS = Number(opt.oneshots), REQ_TURNS = Number(opt["requests-turns"]);
const ZERO_BIN = process.env.ZERO_BIN, FAKELLM_BIN = process.env.FAKELLM_BIN;
if (!ZERO_BIN || !FAKELLM_BIN) throw new Error("set ZERO_BIN and FAKELLM_BIN (scripts/peers does)");
const CODEX_BIN = join(here, "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
const CODEX_PATH_DIR = join(here, "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path");
const CODEX_ACP_BIN = join(here, "node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp");
const NODE_AGENT = join(here, "agent.mjs");
const TASK = "Run echo hello in a shell, then say done.";

const log = (...a) => console.error("[peers]", ...a);
const root = mkdtempSync(join(tmpdir(), "zero-peers-"));
const procs = new Set(); // every child still to kill at the end
const cleanups = [];

function track(p) {
  procs.add(p);
  p.once("exit", () => procs.delete(p));
  return p;
}
function killAll() {
  for (const p of procs) { try { p.kill("SIGKILL"); } catch { /* gone */ } }
  for (const pid of mcpPids) { try { process.kill(pid, "SIGKILL"); } catch { /* gone */ } }
}
process.on("exit", () => { killAll(); rmSync(root, { recursive: true, force: true }); });
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));
const mcpPids = new Set(); // MCP servers spawned by the SDK's transport

const dir = (name) => { const d = join(root, name); mkdirSync(d, { recursive: true }); return d; };
const median = (xs) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const now = () => performance.now();

// ---- the scripted model -------------------------------------------------

const call = (name, args) => ({ tool_calls: [{ name, arguments: JSON.stringify(args) }] });
const SCRIPTS = {
  zero: [call("code_execution_tool", { runtime: "terminal", code: "echo hello" }), { content: "done" }],
  codex: [call("exec_command", { cmd: "echo hello" }), { content: "done" }],
  node: [call("shell", { command: "echo hello" }), { content: "done" }],
};

/** Starts fakellm with the agent's exchange repeated; resolves to {url, stop()}. */
async function startModel(kind) {
  const d = dir(`model-${kind}-${Math.random().toString(36).slice(2)}`);
  writeFileSync(join(d, "script.json"), JSON.stringify({ repeat: 5000, replies: SCRIPTS[kind] }));
  const counts = join(d, "counts.json");
  const p = track(spawn(FAKELLM_BIN, ["-script", join(d, "script.json"), "-counts", counts], { stdio: ["ignore", "pipe", "pipe"] }));
  let stderr = "";
  p.stderr.on("data", (b) => { stderr += b; });
  const [url] = await Promise.race([
    once(createInterface({ input: p.stdout }), "line"),
    once(p, "exit").then(() => { throw new Error(`fakellm exited: ${stderr}`); }),
  ]);
  return {
    url: url.trim(),
    stderr: () => stderr,
    /** Stops the server once its requests are answered; resolves to its counts. */
    async stop() {
      const exited = once(p, "exit");
      p.kill("SIGTERM");
      await exited;
      return JSON.parse(readFileSync(counts, "utf8"));
    },
  };
}

// ---- agent environments ---------------------------------------------------

function zeroEnv(url, home) {
  return {
    PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), TMPDIR: tmpdir(),
    ZERO_MODEL: "llmtest", OPENAI_BASE_URL: url, ZERO_SANDBOX: "local", ZERO_APPROVAL: "auto",
  };
}

/**
 * A private CODEX_HOME for the model at url: a custom provider on the
 * Responses API with a dummy key, no approvals, no sandbox (see README), and
 * every feature off that reaches the internet (update check, analytics,
 * plugins and apps, which sync from chatgpt.com and api.github.com).
 */
function codexEnv(url, home) {
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(join(codexHome, "config.toml"), `model = "llmtest"
model_provider = "fakellm"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fakellm]
name = "fakellm"
base_url = "${url}"
wire_api = "responses"
env_key = "FAKELLM_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
plugin_sharing = false
apps = false
`);
  return {
    PATH: `${CODEX_PATH_DIR}:${process.env.PATH}`, HOME: home, CODEX_HOME: codexHome, TMPDIR: tmpdir(),
    FAKELLM_API_KEY: "dummy",
  };
}

function nodeEnv(url, home) {
  return { PATH: process.env.PATH, HOME: home, TMPDIR: tmpdir(), OPENAI_BASE_URL: url, OPENAI_MODEL: "llmtest" };
}

// ---- process trees --------------------------------------------------------

/**
 * VmRSS of pid and all its descendants (walking /proc/<pid>/stat ppid), in
 * MB, and of it RssAnon: the memory the processes allocated themselves, as
 * opposed to pages of their executables and libraries mapped from the page
 * cache (shared with every process of the same binary, and dropped by the
 * kernel under pressure without swapping).
 */
function treeRSS(pid) {
  const children = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch { /* ended meanwhile */ }
  }
  let kb = 0, anon = 0, n = 0;
  const walk = (p) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, "latin1");
      const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
      if (m) { kb += Number(m[1]); n++; }
      const a = /^RssAnon:\s+(\d+) kB/m.exec(status);
      if (a) anon += Number(a[1]);
    } catch { /* ended meanwhile */ }
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return { mb: kb / 1024, anonMB: anon / 1024, procs: n };
}

// ---- ACP agents -----------------------------------------------------------

/** Spawns an ACP agent and connects the SDK's client; initialize is the caller's. */
function spawnACP(cmd, args, env, cwd) {
  const p = track(spawn(cmd, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] }));
  p.on("error", (e) => { stderr += `spawn: ${e.message}\n`; });
  let stderr = "";
  p.stderr.on("data", (b) => { stderr += b; if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 19)); });
  const updates = [];
  const app = acpClient({ name: "zero-peers" })
    .onNotification(methods.client.session.update, ({ params }) => { updates.push(params); })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      const o = params.options.find((x) => x.kind === "allow_once") ?? params.options[0];
      return { outcome: { outcome: "selected", optionId: o.optionId } };
    });
  const conn = app.connect(ndJsonStream(Writable.toWeb(p.stdin), Readable.toWeb(p.stdout)));
  // Settles when the process has ended or could not be started.
  const exited = new Promise((resolve) => { p.once("exit", resolve); p.once("error", resolve); });
  const fail = (what) => (e) => { throw new Error(`${what}: ${e?.message ?? JSON.stringify(e)}\n--- stderr ---\n${stderr.slice(-4000)}`); };
  // request sends one request; an agent that ends before answering, or has
  // not answered in 120 s, fails it.
  const request = (method, params, what) => {
    let timer;
    return Promise.race([
      conn.agent.request(method, params),
      exited.then(() => { throw new Error(`the agent ended (exit ${p.exitCode ?? p.signalCode})`); }),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("no answer in 120 s")), 120_000); }),
    ]).catch(fail(what)).finally(() => clearTimeout(timer));
  };
  return {
    proc: p,
    stderr: () => stderr,
    initialize: () => request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }, "initialize"),
    newSession: (ws) => request(methods.agent.session.new, { cwd: ws, mcpServers: [] }, "session/new"),
    /** One prompt to its response; checks it ended the turn with "done". */
    async prompt(sessionId, text) {
      const from = updates.length;
      const res = await request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }, "session/prompt");
      const said = updates.slice(from).filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
        .map((u) => u.update.content?.text ?? "").join("");
      if (res.stopReason !== "end_turn" || !said.includes("done")) {
        throw new Error(`prompt ended ${res.stopReason} saying ${JSON.stringify(said)}\n--- stderr ---\n${stderr.slice(-4000)}`);
      }
      return res;
    },
    /** Closes stdin and waits for the exit (SIGKILL after 10 s). */
    async close() {
      if (p.exitCode !== null || p.signalCode !== null) return;
      p.stdin.end();
      const t = setTimeout(() => p.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

// ---- MCP agents -----------------------------------------------------------

/** Spawns an MCP server through the SDK's stdio transport and connects (initialize). */
async function connectMCP(cmd, args, env, cwd) {
  const transport = new StdioClientTransport({ command: cmd, args, env, cwd, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (b) => { stderr += b; if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 19)); });
  const client = new Client({ name: "zero-peers", version: "1" }, { capabilities: {} });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`connect: ${e.message}\n--- stderr ---\n${stderr.slice(-4000)}`);
  } finally {
    if (transport.pid) mcpPids.add(transport.pid);
  }
  return {
    client,
    pid: transport.pid,
    stderr: () => stderr,
    async callTool(name, args) {
      const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
      if (res.isError) throw new Error(`${name}: ${JSON.stringify(res.content)}\n--- stderr ---\n${stderr.slice(-4000)}`);
      return res;
    },
    async close() {
      const pid = transport.pid;
      await client.close(); // ends stdin, then SIGTERM, then SIGKILL
      mcpPids.delete(pid);
    },
  };
}

// ---- the agents -----------------------------------------------------------

/**
 * Each agent: its kind of model script, its protocol, and how to start it
 * (start → an object with initialize(), newSession(ws), turn(text), pid,
 * close()). initialize() is timed from the spawn for figure 1.
 */
const AGENTS = [
  {
    id: "zero-acp", label: "zero acp", kind: "zero", proto: "ACP",
    env: zeroEnv,
    start(env, ws) {
      const a = spawnACP(ZERO_BIN, ["acp"], env, ws);
      let sid;
      return {
        pid: a.proc.pid, initialize: () => a.initialize(),
        async newSession() { sid = (await a.newSession(ws)).sessionId; },
        turn: (text) => a.prompt(sid, text), close: () => a.close(), stderr: a.stderr,
      };
    },
  },
  {
    id: "codex-acp", label: "codex-acp", kind: "codex", proto: "ACP",
    env: codexEnv,
    start(env, ws) {
      const a = spawnACP(CODEX_ACP_BIN, [], env, ws);
      let sid;
      return {
        pid: a.proc.pid, initialize: () => a.initialize(),
        async newSession() { sid = (await a.newSession(ws)).sessionId; },
        turn: (text) => a.prompt(sid, text), close: () => a.close(), stderr: a.stderr,
      };
    },
  },
  {
    id: "zero-mcp", label: "zero mcp", kind: "zero", proto: "MCP",
    env: zeroEnv,
    start(env, ws) {
      let m, session;
      const o = {
        async initialize() { m = await connectMCP(ZERO_BIN, ["mcp"], env, ws); o.pid = m.pid; },
        async newSession() { session = undefined; },
        async turn(text) {
          const res = await m.callTool("zero_run", { message: text, workspace: ws, ...(session ? { session } : {}) });
          const sc = res.structuredContent ?? {};
          if (sc.response !== "done") throw new Error(`zero_run answered ${JSON.stringify(sc)}\n--- stderr ---\n${m.stderr().slice(-4000)}`);
          session = sc.session;
        },
        close: () => m?.close(), stderr: () => m?.stderr() ?? "",
      };
      return o;
    },
  },
  {
    id: "node-mcp", label: "node agent (~70 lines)", kind: "node", proto: "MCP",
    env: nodeEnv,
    start(env, ws) {
      let m;
      const o = {
        async initialize() { m = await connectMCP(process.execPath, [NODE_AGENT], env, ws); o.pid = m.pid; },
        async newSession() {},
        async turn(text) {
          const res = await m.callTool("run", { message: text });
          const said = res.content?.map((c) => c.text ?? "").join("");
          if (said !== "done") throw new Error(`run answered ${JSON.stringify(said)}\n--- stderr ---\n${m.stderr().slice(-4000)}`);
        },
        close: () => m?.close(), stderr: () => m?.stderr() ?? "",
      };
      return o;
    },
  },
];

const ONESHOT = [
  { id: "zero-run", label: "zero run", kind: "zero", env: zeroEnv, argv: (task) => [ZERO_BIN, ["run", task]] },
  { id: "codex-exec", label: "codex exec", kind: "codex", env: codexEnv, argv: (task) => [CODEX_BIN, ["exec", "--skip-git-repo-check", task]] },
];

// ---- the measurements -----------------------------------------------------

const results = {}; // id → {figure: value}
const failures = {}; // id → message
const put = (id, k, v) => { (results[id] ??= {})[k] = v; };

/** Figures 1–3 for one protocol agent, against its own model server. */
async function measureAgent(a) {
  const model = await startModel(a.kind);
  const home = dir(`home-${a.id}`), ws = dir(`ws-${a.id}`);
  const env = a.env(model.url, home);
  try {
    // 1. process start → initialize answer
    const starts = [];
    for (let i = 0; i < STARTS; i++) {
      const t0 = now();
      const ag = a.start(env, ws);
      try {
        await ag.initialize();
        starts.push(now() - t0);
      } finally { await ag.close(); }
    }
    put(a.id, "start", median(starts));
    log(a.id, "start ms", starts.map((x) => x.toFixed(0)).join(" "));

    // 2 and 3: one process, one session
    const ag = a.start(env, ws);
    try {
      await ag.initialize();
      await ag.newSession();
      await ag.turn(TASK); // the warm-up turn, after which memory is read
      const mem = treeRSS(ag.pid);
      put(a.id, "rss", mem.mb);
      put(a.id, "anon", mem.anonMB);
      put(a.id, "procs", mem.procs);
      log(a.id, `idle RSS ${mem.mb.toFixed(1)} MB (anonymous ${mem.anonMB.toFixed(1)}) in ${mem.procs} processes`);
      const turns = [];
      for (let i = 0; i < TURNS; i++) {
        const t0 = now();
        await ag.turn(TASK);
        turns.push(now() - t0);
      }
      put(a.id, "turn", median(turns));
      log(a.id, "turn ms", turns.map((x) => x.toFixed(0)).join(" "));
    } finally { await ag.close(); }
  } finally { await model.stop(); }

  // 5. model requests for REQ_TURNS user messages: a fresh server and agent
  // process; counted once the agent has exited and the server answered all.
  const m5 = await startModel(a.kind);
  const home5 = dir(`home5-${a.id}`), ws5 = dir(`ws5-${a.id}`);
  try {
    const ag = a.start(a.env(m5.url, home5), ws5);
    try {
      await ag.initialize();
      await ag.newSession();
      for (let i = 0; i < REQ_TURNS; i++) await ag.turn(TASK);
    } finally { await ag.close(); }
  } finally {
    const c = await m5.stop();
    put(a.id, "requests", c.requests + c.memory_requests);
    put(a.id, "memreq", c.memory_requests);
    log(a.id, `model requests for ${REQ_TURNS} turns: ${c.requests} + ${c.memory_requests} memory`);
  }
}

/** Figure 4: one task, whole process, spawn to exit. */
async function measureOneShot(o) {
  const model = await startModel(o.kind);
  const home = dir(`home-${o.id}`), ws = dir(`ws-${o.id}`);
  const env = o.env(model.url, home);
  try {
    const times = [];
    for (let i = 0; i < ONESHOTS; i++) {
      const [cmd, args] = o.argv(TASK);
      const t0 = now();
      const p = track(spawn(cmd, args, { cwd: ws, env, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 }));
      let out = "";
      p.stdout.on("data", (b) => { out += b; });
      p.stderr.on("data", (b) => { out += b; });
      const [code, sig] = await once(p, "exit");
      const ms = now() - t0;
      if (code !== 0 || !out.includes("done")) throw new Error(`${cmd} ${args[0]} exited ${code ?? sig}:\n${out.slice(-4000)}`);
      times.push(ms);
    }
    put(o.id, "oneshot", median(times));
    log(o.id, "one-shot ms", times.map((x) => x.toFixed(0)).join(" "));
  } finally { await model.stop(); }
}

const only = opt.only ? new Set(opt.only.split(",")) : null;
for (const a of AGENTS) {
  if (only && !only.has(a.id)) continue;
  log("measuring", a.id);
  try { await measureAgent(a); } catch (e) { failures[a.id] = e.message; log(a.id, "FAILED:", e.message); }
}
for (const o of ONESHOT) {
  if (only && !only.has(o.id)) continue;
  log("measuring", o.id);
  try { await measureOneShot(o); } catch (e) { failures[o.id] = e.message; log(o.id, "FAILED:", e.message); }
}

// ---- the table ------------------------------------------------------------

const f0 = (x) => (x === undefined || Number.isNaN(x) ? "–" : x.toFixed(0));
const f1 = (x) => (x === undefined || Number.isNaN(x) ? "–" : x.toFixed(1));
const rows = [];
rows.push(`| agent | protocol | start → initialize (ms) | idle RSS, process tree (MB) | of it anonymous (MB) | warm turn (ms) | model requests, ${REQ_TURNS} turns |`);
rows.push("|---|---|---:|---:|---:|---:|---:|");
for (const a of AGENTS) {
  if (only && !only.has(a.id)) continue;
  const r = results[a.id] ?? {};
  const req = r.requests === undefined ? "–" : `${r.requests}${r.memreq ? ` (${r.memreq} memory)` : ""}`;
  const rss = r.rss === undefined ? "–" : `${f1(r.rss)} (${r.procs} proc)`;
  rows.push(`| ${a.label}${failures[a.id] ? " ⚠" : ""} | ${a.proto} | ${f0(r.start)} | ${rss} | ${f1(r.anon)} | ${f0(r.turn)} | ${req} |`);
}
rows.push("");
rows.push("| one-shot task, whole process | wall time (ms) |");
rows.push("|---|---:|");
for (const o of ONESHOT) {
  if (only && !only.has(o.id)) continue;
  rows.push(`| ${o.label}${failures[o.id] ? " ⚠" : ""} | ${f0(results[o.id]?.oneshot)} |`);
}
rows.push("");
rows.push(`Medians: ${STARTS} starts, ${TURNS} warm turns, ${ONESHOTS} one-shot runs; node ${process.version}, ${process.platform}/${process.arch}.`);
for (const [id, msg] of Object.entries(failures)) rows.push(`⚠ ${id}: ${msg.split("\n")[0]}`);
console.log(rows.join("\n"));
process.exitCode = Object.keys(failures).length ? 1 : 0;
