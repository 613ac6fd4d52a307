// Shared helpers of the end-to-end tests: a scripted model (the fakellm
// binary), a workspace, and the real zero binary on stdio. The Go test in
// this folder builds both binaries and passes their paths in ZERO_BIN and
// FAKELLM_BIN.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync, realpathSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { createInterface } from "node:readline";

export const ZERO_BIN = process.env.ZERO_BIN;
export const FAKELLM_BIN = process.env.FAKELLM_BIN;
if (!ZERO_BIN || !FAKELLM_BIN) {
  throw new Error("run these tests through `go test ./e2e` (it sets ZERO_BIN and FAKELLM_BIN)");
}

/**
 * A fresh directory, removed when the test ends. The after hooks run in the
 * order they were added, so a zero whose home this is may still be running
 * (and writing its state, such as the token calibration) while it is
 * removed: the removal is retried, and a failure to remove never throws,
 * which would skip the hooks after it (the ones that kill the processes)
 * and leave the test runner waiting on them.
 */
export function tempDir(t, prefix = "zero-e2e-") {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  t.after(() => {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
    } catch (err) {
      console.error(`could not remove ${dir}: ${err.message}`);
    }
  });
  return dir;
}

/** A model reply that asks for a tool, as the agent's JSON protocol wants. */
export function toolReply(thought, tool, args, headline = thought) {
  return JSON.stringify({ thoughts: [thought], headline, tool_name: tool, tool_args: args });
}

/** A model reply that ends the run with text. */
export function answer(text) {
  return toolReply("answering", "response", { text }, "Answering");
}

/**
 * Starts fakellm with replies (llmtest.Reply objects: match, content,
 * reasoning, delay, first_delay, chunk_size, ...) and returns its /v1 URL.
 */
export async function startModel(t, replies) {
  const dir = tempDir(t, "zero-model-");
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify({ replies }));
  const proc = spawn(FAKELLM_BIN, ["-script", script], { stdio: ["ignore", "pipe", "pipe"] });
  proc.stderr.resume();
  t.after(() => proc.kill("SIGTERM"));
  const lines = createInterface({ input: proc.stdout });
  const [url] = await once(lines, "line");
  return url.trim();
}

/**
 * The environment of `zero` against the model at url: a private config
 * folder, the local sandbox, no approvals (env overrides), no key.
 */
export function zeroEnv(t, url, env = {}) {
  const home = tempDir(t, "zero-home-");
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    TMPDIR: process.env.TMPDIR ?? "/tmp",
    ZERO_MODEL: "llmtest",
    OPENAI_BASE_URL: url,
    ZERO_SANDBOX: "local",
    ZERO_APPROVAL: "auto",
    ...env,
  };
}

/**
 * Starts `zero <args>` with zeroEnv; stderr is collected for failure
 * messages. Returns the child process.
 */
export function spawnZero(t, args, { url, env = {}, cwd } = {}) {
  const proc = spawn(ZERO_BIN, args, { cwd, stdio: ["pipe", "pipe", "pipe"], env: zeroEnv(t, url, env) });
  let stderr = "";
  proc.stderr.on("data", (d) => { stderr += d; });
  proc.stderrText = () => stderr;
  t.after(() => { if (proc.exitCode === null) proc.kill("SIGKILL"); });
  return proc;
}

/** Waits until pred() is true, polling; fails after ms. */
export async function until(pred, ms = 10000, what = "condition") {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A unique argument for `sleep` (seconds with a random fraction), so a test
 * can find the command among the host's processes: commands in a sandbox
 * with its own PID namespace cannot tell it their host pid.
 */
export function sleepArg(seconds = 30) {
  return `${seconds}.${Math.floor(Math.random() * 1e6)}`;
}

/** The host pid of a live process that has arg in its command line, or 0. */
export function findByArg(arg) {
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "latin1").split("\0");
      if (argv.includes(arg) && !gone(Number(name))) return Number(name);
    } catch { /* it ended meanwhile */ }
  }
  return 0;
}

/** Whether pid no longer runs (absent, or a zombie nobody reaped yet). */
export function gone(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
}
