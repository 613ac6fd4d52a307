// Does the extension start the binary the user's zero.path names, every time? (issue 29)
// Usage: node starts.mjs <code-server entry.js> <.vsix without a binary> <zero binary> <model URL>
//                        <base settings.json> <work dir> <screenshot dir>     (run by scripts/vscode-e2e)
//
// E2E_STARTS windows in a row (default 10), each a fresh code-server with a fresh --user-data-dir and
// --extensions-dir, into which the .vsix WITHOUT a bundled binary is installed, and a PATH with no
// `zero` on it: a start that misses zero.path fails where it can be seen (`zero` is not found) instead
// of quietly running some other binary. Each window:
//   - User/settings.json: the harness's settings (with its "extensions.autoUpdate": false, which VS Code
//     migrates by rewriting the file: one of the moments a machine-scoped zero.path used to vanish in a
//     remote window), zero.path = the built binary, zero.model and zero.baseUrl for the scripted model;
//   - the workspace's .vscode/settings.json points zero.path at a script inside the workspace that
//     leaves a marker file if it is ever run: a repository must not choose the binary Zero starts;
//   - start 1: the Zero view is opened. The start's `binary:` line in the Zero output channel must name
//     the user's zero.path ("zero.path in your user settings"), its `starting` line must start it, and
//     the server must answer (the language client's trace of the initialize response);
//   - start 2: zero.model is changed in the Settings editor, so VS Code rewrites User/settings.json and
//     reads it again (the rewrite that made the old machine-overridable zero.path read as empty; a write
//     from outside is not noticed by code-server's workbench, so the test writes as a user does). Once
//     the extension says the settings changed, "Zero: Restart Server" from the command palette; checked
//     as start 1, and its `starting` line must carry the new model (the rewrite was read first).
// The marker must never exist (the application scope keeps VS Code from passing a workspace's
// zero.path to the extension at all, so the extension never even sees it). Each start is reported;
// the closing line is "starts: N of M used zero.path", and the exit status is 0 only when all did.
//
// Everything waits for what the workbench does (log lines, page state); the timeouts only stop a hang.
import { runCommand as paletteCommand } from './palette.mjs';
import { createRequire } from 'node:module';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { chromium } = require(require.resolve('playwright-core', { paths: (process.env.NODE_PATH || '').split(':').filter(Boolean) }));

const [csEntry, vsix, zeroBin, modelURL, baseSettings, workDir, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: starts.mjs CODE_SERVER_ENTRY VSIX ZERO_BINARY MODEL_URL BASE_SETTINGS WORKDIR OUTDIR');
  process.exit(2);
}
const windows = Number(process.env.E2E_STARTS || 10);
if (!Number.isInteger(windows) || windows < 1) {
  console.error(`E2E_STARTS=${process.env.E2E_STARTS}: want a whole number of windows, at least 1`);
  process.exit(2);
}
if (!path.isAbsolute(zeroBin) || !fs.existsSync(zeroBin)) {
  console.error(`the zero binary ${zeroBin} must be an absolute path that exists`);
  process.exit(2);
}
const HANG = 90000; // a step that takes this long is stuck: it stops a hang, it decides nothing
const MODEL_A = 'llmtest', MODEL_B = 'llmtest-rewritten';
const t0 = Date.now();
const log = (...a) => console.log(`[starts +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
fs.mkdirSync(outDir, { recursive: true });

// The windows' PATH: the run's, less every directory that holds an executable `zero`.
const PATH = (() => {
  const dirs = (process.env.PATH || '').split(':').filter(Boolean);
  const hasZero = (d) => { try { fs.accessSync(path.join(d, 'zero'), fs.constants.X_OK); return true; } catch { return false; } };
  const dropped = dirs.filter(hasZero);
  if (dropped.length > 0) log(`left out of the windows' PATH, as they hold a zero: ${dropped.join(', ')}`);
  return dirs.filter((d) => !hasZero(d)).join(':');
})();

/** Polls cond until it gives a truthy value, and returns it; throws with what() after ms (a hang). */
async function until(cond, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`nothing after ${ms / 1000} s: ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The Zero output channel's text (its log file under the user-data-dir), '' until there is one. */
function zeroOutput(ud) {
  const found = [];
  const walk = (d) => {
    let entries = [];
    try { entries = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else if (/-Zero\.log$/.test(e.name)) found.push(path.join(d, e.name));
    }
  };
  walk(path.join(ud, 'logs'));
  if (found.length > 1) throw new Error(`more than one Zero output log (one window was expected): ${found.join(', ')}`);
  return found.length ? fs.readFileSync(found[0], 'utf8') : '';
}

/** The output without the language client's message trace, to show a person. */
const readable = (text) => text.split('\n').filter((l) => !/^(\[Trace|Params:|Result:|No result|\s|[{}\]])/.test(l) && l !== '').join('\n');

/**
 * The nth start (1-based) in the Zero output, once it is decided: ready (the server answered
 * initialize) or failed. Undefined while it is under way.
 */
function nthStart(text, n) {
  const lines = text.split('\n');
  const at = [];
  lines.forEach((l, i) => { if (l.startsWith('binary: ')) at.push(i); });
  if (at.length < n) return undefined;
  const own = lines.slice(at[n - 1], at[n] ?? lines.length);
  const ready = own.some((l) => /^\[Trace .*\] Received response 'initialize - \(\d+\)'/.test(l));
  // A start that failed: every message of the extension's begins "Zero: " (launch.ts startFailure);
  // the language client's own when it cannot spawn the binary. (Not its "[Error …] Server process
  // exited": the server a restart stopped says that too.)
  const failure = own.find((l) => /^Zero: /.test(l) || /Launching server using command .* failed/.test(l));
  if (!ready && !failure) return undefined;
  const m = /^binary: (.*) \((.*)\)$/.exec(own[0]);
  return {
    binary: m ? m[1] : own[0],
    why: m ? m[2] : '',
    starting: own.find((l) => l.startsWith('starting ')) ?? '',
    failure: failure ?? '',
  };
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', '--no-first-run', '--disable-background-networking'],
});

const results = []; // one per start: { n, used, detail }
let server; // the window's code-server
async function stopServer() {
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  const gone = new Promise((r) => server.once('exit', r));
  server.kill('SIGTERM');
  const stuck = setTimeout(() => { try { process.kill(-server.pid, 'SIGKILL'); } catch { /* gone */ } }, 30000);
  await gone;
  clearTimeout(stuck);
  // What it started (the extension host, Zero) is in its process group: nothing outlives the window.
  try { process.kill(-server.pid, 'SIGKILL'); } catch { /* all gone */ }
}
// Stops a hang of the whole stage (a browser that stopped answering); it never decides a result.
setTimeout(async () => {
  log(`the stage is stuck after ${(Date.now() - t0) / 1000} s: stopping`);
  await stopServer().catch(() => {});
  process.exit(1);
}, windows * 4 * 60000).unref();

for (let w = 1; w <= windows; w++) {
  const d = path.join(workDir, `window-${w}`);
  const ud = path.join(d, 'ud'), ext = path.join(d, 'ext'), ws = path.join(d, 'workspace');
  fs.rmSync(d, { recursive: true, force: true });
  for (const p of [path.join(ud, 'User'), ext, path.join(ws, '.vscode'), ...['home', 'xdg-config', 'xdg-data', 'xdg-cache', 'xdg-state'].map((x) => path.join(d, x))]) {
    fs.mkdirSync(p, { recursive: true });
  }
  const marker = path.join(d, 'the-workspace-binary-ran');
  const planted = path.join(ws, 'zero-from-the-repository');
  fs.writeFileSync(planted, `#!/bin/sh\n# Put here by the repository: Zero must never run it.\n: > '${marker}'\nexit 1\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'zero.path': planted }, null, 2) + '\n');
  fs.writeFileSync(path.join(ws, 'README.txt'), 'zero starts e2e workspace\n');
  const settingsFile = path.join(ud, 'User', 'settings.json');
  fs.writeFileSync(settingsFile, JSON.stringify({
    ...JSON.parse(fs.readFileSync(baseSettings, 'utf8')),
    'zero.path': zeroBin, 'zero.baseUrl': modelURL, 'zero.model': MODEL_A, 'zero.sandbox': 'local', 'zero.approval': 'ask',
    'zero.env': { ZERO_LOG: 'debug' },
    // vscode-languageclient's trace of the messages (its <id>.trace.server setting) in the Zero output:
    // "Received response 'initialize …'" is the moment the server answered.
    'zero.trace.server': 'messages',
  }, null, 2) + '\n');
  const env = {
    ...process.env, PATH, HOME: path.join(d, 'home'), XDG_CONFIG_HOME: path.join(d, 'xdg-config'),
    XDG_DATA_HOME: path.join(d, 'xdg-data'), XDG_CACHE_HOME: path.join(d, 'xdg-cache'), XDG_STATE_HOME: path.join(d, 'xdg-state'),
  };
  const config = path.join(d, 'config.yaml');
  fs.writeFileSync(config, 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');

  const first = 2 * w - 1;
  const record = (n, used, detail) => {
    results.push({ n, used, detail });
    log(`start ${n} of ${2 * windows} (window ${w}, ${n === first ? 'the view opens' : 'Zero: Restart Server after the settings were rewritten'}): ${used ? 'used zero.path' : 'FAILED'}; ${detail}`);
  };

  const inst = spawnSync(process.execPath, [csEntry, '--config', config, '--user-data-dir', ud, '--extensions-dir', ext, '--install-extension', vsix, '--force'],
    { env, encoding: 'utf8' });
  const installed = fs.readdirSync(ext).filter((n) => n.startsWith('zeroagent.zero-vscode-'));
  let setup = '';
  if (inst.status !== 0 || installed.length !== 1) setup = `installing ${vsix} failed: ${inst.stdout}${inst.stderr}`;
  else if (fs.existsSync(path.join(ext, installed[0], 'bin'))) setup = `${vsix} has a bundled binary (bin/): this test needs the .vsix without one`;
  if (setup) {
    record(first, false, setup);
    record(first + 1, false, setup);
    continue;
  }

  server = spawn(process.execPath, [csEntry, '--config', config, '--auth', 'none', '--bind-addr', '127.0.0.1:0',
    '--user-data-dir', ud, '--extensions-dir', ext, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    '--disable-getting-started-override', '--ignore-last-opened', ws], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const serverLog = fs.createWriteStream(path.join(d, 'server.log'));
  let serverOut = '';
  const listening = new Promise((resolve, reject) => {
    const onData = (b) => {
      serverLog.write(b);
      serverOut += b.toString();
      const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(serverOut);
      if (m) resolve(m[1]);
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.once('exit', (c) => reject(new Error(`code-server exited (${c}) before it listened: ${serverOut.slice(-500)}`)));
  });

  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (['127.0.0.1', 'localhost'].includes(u.hostname) || u.protocol === 'data:' || u.protocol === 'blob:') return route.continue();
    return route.abort();
  });
  const page = await context.newPage();
  const view = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');

  const runCommand = (title) => paletteCommand(page, title, HANG);

  /** Waits until the window's nth start is decided in the Zero output, then judges it. */
  async function judge(nth, model) {
    const n = first + nth - 1;
    const s = await until(() => nthStart(zeroOutput(ud), nth), HANG,
      () => `start ${n}'s binary line and its outcome in the Zero output:\n${readable(zeroOutput(ud))}`);
    const problems = [];
    if (s.binary !== zeroBin) problems.push(`it started ${s.binary}, not the user's zero.path ${zeroBin}`);
    if (s.why !== 'zero.path in your user settings') problems.push(`why: "${s.why}"`);
    if (!s.starting.startsWith(`starting ${zeroBin} lsp `)) problems.push(`its start line is "${s.starting}"`);
    else if (!s.starting.includes(` --model ${model} `)) problems.push(`its start line lacks --model ${model} (the settings were not read again first): "${s.starting}"`);
    if (s.failure) problems.push(`the server did not start: ${s.failure}`);
    if (fs.existsSync(marker)) problems.push(`the workspace's ${planted} ran`);
    record(n, problems.length === 0, problems.length === 0 ? `${s.binary} (${s.why}), the server answered` : problems.join('; '));
  }

  try {
    const base = await listening;
    await page.goto(`${base}/?folder=${encodeURIComponent(ws)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: HANG });
    // Start 1: the view starts the server.
    await runCommand('Zero: Focus on Chat View');
    await view.locator('#input').waitFor({ state: 'visible', timeout: HANG });
    await judge(1, MODEL_A);
    await page.screenshot({ path: path.join(outDir, `starts-${String(first).padStart(2, '0')}.png`) }).catch(() => {});

    // Start 2: another zero.model in the Settings editor: VS Code rewrites User/settings.json and reads
    // it again; the extension then offers a restart, which is the sign the new settings reached it.
    await runCommand('Notifications: Clear All Notifications');
    await runCommand('Preferences: Open User Settings');
    await page.locator('.settings-editor').waitFor({ timeout: HANG });
    await page.keyboard.type('zero.model');
    const field = page.locator('.settings-editor input[aria-label="zero.model"]');
    await field.waitFor({ timeout: HANG });
    await field.fill(MODEL_B);
    await field.press('Enter');
    // (Read until it parses: VS Code may be halfway through writing it.)
    const rewritten = await until(() => { try { const j = JSON.parse(fs.readFileSync(settingsFile, 'utf8')); return j['zero.model'] === MODEL_B && j; } catch { return false; } },
      HANG, () => `User/settings.json with zero.model ${MODEL_B}: ${fs.readFileSync(settingsFile, 'utf8')}`);
    if (rewritten['zero.path'] !== zeroBin) throw new Error(`the rewritten User/settings.json has zero.path ${JSON.stringify(rewritten['zero.path'])}`);
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'the settings changed' }).first().waitFor({ timeout: HANG });
    await runCommand('Zero: Restart Server');
    await judge(2, MODEL_B);
    await page.screenshot({ path: path.join(outDir, `starts-${String(first + 1).padStart(2, '0')}.png`) }).catch(() => {});
  } catch (e) {
    const why = e.message.split('\n')[0];
    log(`window ${w}: ${why}`);
    await page.screenshot({ path: path.join(outDir, `starts-window-${w}-failure.png`) }).catch(() => {});
    for (let n = first + results.filter((r) => r.n >= first).length; n <= first + 1; n++) record(n, false, `not decided: ${why}`);
  } finally {
    await context.close().catch(() => {});
    await stopServer();
    serverLog.end();
  }
  const text = zeroOutput(ud);
  fs.writeFileSync(path.join(d, 'zero-output.log'), text);
  if (results.some((r) => r.n >= first && !r.used)) log(`window ${w}'s Zero output (less the message trace):\n${readable(text)}`);
}
await browser.close().catch(() => {});

const total = 2 * windows;
const used = results.filter((r) => r.used).length;
console.log(`starts: ${used} of ${total} used zero.path`);
process.exit(used === total ? 0 : 1);
