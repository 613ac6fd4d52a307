// Drives the Zero extension in a real VS Code workbench (code-server) with headless Chromium.
// Usage: node test.mjs <baseUrl> <workspaceFolder> <screenshotDir>   (run by scripts/vscode-e2e)
// The model is bin/fakellm with replies.json: a run that executes `echo e2e-output-42` after an
// approval and answers, then (in a new session) a text_editor:write of notes.txt, and more
// (README.md lists the steps; the last is an MCP server's question, answered in the view).
import { runCommand as paletteCommand } from './palette.mjs';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

// playwright-core lives in the e2e cache (NODE_PATH), not in the extension's node_modules.
const require = createRequire(import.meta.url);
const { chromium } = require(require.resolve('playwright-core', { paths: (process.env.NODE_PATH || '').split(':').filter(Boolean) }));

const [baseUrl, folder, outDir] = process.argv.slice(2);
if (!baseUrl || !folder || !outDir) { console.error('usage: test.mjs URL FOLDER OUTDIR'); process.exit(2); }
fs.mkdirSync(outDir, { recursive: true });
const t0 = Date.now();
const log = (...a) => console.log(`[e2e +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

let passed = 0, failed = 0, shot = 0;
const blocked = [];
const consoleErrors = [];

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', '--no-first-run', '--disable-background-networking'],
});
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
await context.route('**/*', (route) => {
  const u = new URL(route.request().url());
  if (['127.0.0.1', 'localhost'].includes(u.hostname) || u.protocol === 'data:' || u.protocol === 'blob:') return route.continue();
  blocked.push(u.href);
  return route.abort();
});
const page = await context.newPage();
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });

async function screenshot(name) {
  const f = path.join(outDir, `${String(++shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: f }).catch((e) => log('screenshot failed', e.message));
  log('screenshot', f);
}

/** Runs a check; a failed check stops the test (the later steps depend on it). */
async function check(name, fn) {
  try { await fn(); passed++; log('PASS', name); }
  catch (e) {
    failed++; log('FAIL', name, '-', e.message.split('\n')[0]);
    await screenshot('failure');
    await finish();
  }
}

async function finish() {
  log('blocked non-loopback requests:', blocked.length ? [...new Set(blocked)] : 'none');
  if (failed && consoleErrors.length) log('browser console errors (first 10):', consoleErrors.slice(0, 10));
  await browser.close().catch(() => {});
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

const runCommand = (title) => paletteCommand(page, title);

// The view is a webview: an iframe (class webview) holding the content iframe #active-frame.
const view = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');

await page.goto(`${baseUrl}/?folder=${encodeURIComponent(folder)}`);

await check('workbench loads', async () => {
  await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
  await page.locator('.part.activitybar, .activitybar').first().waitFor({ timeout: 30000 });
});
await screenshot('workbench');

await check('the Zero view opens (activity bar "Zero", view zero.chat)', async () => {
  const item = page.locator('.activitybar .action-item a[aria-label^="Zero"], .activitybar .action-item[aria-label^="Zero"]').first();
  try { await item.waitFor({ state: 'visible', timeout: 20000 }); await item.click(); }
  catch { await runCommand('Zero: New Session'); }
  await view.locator('#input').waitFor({ state: 'visible', timeout: 30000 });
  // "Starting Zero…" must go away; a failed server shows the banner with class "error".
  const deadline = Date.now() + 30000;
  for (;;) {
    const banner = view.locator('#banner');
    if (await banner.isHidden()) break;
    if (await view.locator('#banner.error').isVisible()) throw new Error(`the Zero server failed: ${(await banner.innerText()).replace(/\s+/g, ' ').slice(0, 400)}`);
    if (Date.now() > deadline) throw new Error(`the banner stays: ${await banner.innerText()}`);
    await page.waitForTimeout(250);
  }
});
await screenshot('zero-view');

await check('send a message from the view', async () => {
  await view.locator('#input').fill('Run the e2e command please.');
  await view.locator('#send').click();
  await view.locator('.msg.user', { hasText: 'Run the e2e command please.' }).waitFor({ timeout: 15000 });
});

await check('thoughts and the tool call appear, waiting for approval', async () => {
  await view.locator('details.thoughts', { hasText: 'Running the e2e command' }).waitFor({ timeout: 30000 });
  await view.locator('.card.tool.status-awaiting_approval', { hasText: 'echo e2e-output-42' }).waitFor({ timeout: 30000 });
  await view.locator('.card.tool .approve button', { hasText: /^Allow$/ }).waitFor({ state: 'visible', timeout: 10000 });
});
await screenshot('approval');

await check('Allow runs the command; its terminal output is shown', async () => {
  await view.locator('.card.tool .approve button', { hasText: /^Allow$/ }).first().click();
  await view.locator('.card.tool pre.terminal', { hasText: 'e2e-output-42' }).waitFor({ timeout: 30000 });
  await view.locator('.card.tool .approval.approved').first().waitFor({ timeout: 10000 });
});
await screenshot('terminal-output');

await check('the answer appears and the run ends', async () => {
  await view.locator('.msg.answer', { hasText: 'e2e-answer-ok' }).waitFor({ timeout: 30000 });
  await view.locator('#stop').waitFor({ state: 'hidden', timeout: 15000 });
});
await screenshot('answer');

await check('new session: the view is empty again', async () => {
  await view.locator('#new').click();
  await view.locator('.msg.user').first().waitFor({ state: 'detached', timeout: 15000 });
  await view.locator('#log .empty').waitFor({ timeout: 15000 });
});
await screenshot('new-session');

await check('a file edit (text_editor:write, approved) shows a diff card', async () => {
  await view.locator('#input').fill('E2E-WRITE-NOTES: write the notes.');
  await view.locator('#input').press('Enter');
  const allow = view.locator('.card.tool .approve button', { hasText: /^Allow$/ }).first();
  await allow.waitFor({ state: 'visible', timeout: 30000 });
  await screenshot('write-approval');
  await allow.click();
  await view.locator('.card.tool ul.diffs li', { hasText: 'notes.txt' }).waitFor({ timeout: 30000 });
  await view.locator('.msg.answer', { hasText: 'e2e-notes-ok' }).waitFor({ timeout: 30000 });
  const text = fs.readFileSync(path.join(folder, 'notes.txt'), 'utf8');
  if (text !== 'notes from the e2e test\n') throw new Error(`notes.txt holds ${JSON.stringify(text)}`);
});
await screenshot('diff-card');

await check('"Open diff" opens a diff editor for notes.txt', async () => {
  await view.locator('.card.tool ul.diffs li', { hasText: 'notes.txt' }).locator('button', { hasText: 'Open diff' }).click();
  await page.locator('.monaco-diff-editor').first().waitFor({ state: 'visible', timeout: 20000 });
  await page.locator('.tabs-container .tab', { hasText: 'notes.txt' }).first().waitFor({ timeout: 10000 });
  await page.locator('.monaco-diff-editor .view-lines', { hasText: 'notes from the e2e test' }).first().waitFor({ timeout: 10000 });
});
await screenshot('open-diff');

await check('switch back to the first session: its run is shown again', async () => {
  const sel = view.locator('#sessions');
  await sel.focus(); // refreshes the list
  let value = '';
  const deadline = Date.now() + 15000;
  while (!value && Date.now() < deadline) {
    const opts = await sel.locator('option').evaluateAll((os) => os.map((o) => ({ v: o.value, t: o.textContent || '' })));
    value = opts.find((o) => /e2e command/i.test(o.t))?.v || '';
    if (!value) {
      // the title may not be the message: take the session that is not the current one
      const cur = await sel.inputValue();
      value = opts.find((o) => o.v && o.v !== cur)?.v || '';
    }
    if (!value) await page.waitForTimeout(500);
  }
  if (!value) throw new Error('no other session in the list');
  await sel.selectOption(value);
  await view.locator('.msg.user', { hasText: 'Run the e2e command please.' }).waitFor({ timeout: 20000 });
  await view.locator('.msg.answer', { hasText: 'e2e-answer-ok' }).waitFor({ timeout: 20000 });
  await view.locator('.card.tool', { hasText: 'echo e2e-output-42' }).first().waitFor({ timeout: 20000 });
});
await screenshot('switched-back');

await check('switch to the second session again', async () => {
  const sel = view.locator('#sessions');
  await sel.focus();
  const opts = await sel.locator('option').evaluateAll((os) => os.map((o) => ({ v: o.value, t: o.textContent || '' })));
  const cur = await sel.inputValue();
  const other = opts.find((o) => o.v && o.v !== cur);
  if (!other) throw new Error('no other session');
  await sel.selectOption(other.v);
  await view.locator('.msg.answer', { hasText: 'e2e-notes-ok' }).waitFor({ timeout: 20000 });
});
await screenshot('switched-again');

await check('Deny refuses a command: it does not run, and the agent is told', async () => {
  await view.locator('#input').fill('E2E-DENY: run the forbidden command.');
  await view.locator('#input').press('Enter');
  const card = view.locator('.card.tool', { hasText: 'echo e2e-denied-77' }).first();
  const deny = card.locator('.approve button', { hasText: /^Deny$/ });
  await deny.waitFor({ state: 'visible', timeout: 30000 });
  await deny.click();
  await card.locator('.approval.denied').waitFor({ timeout: 15000 });
  await view.locator('.msg.answer', { hasText: 'e2e-deny-ok' }).waitFor({ timeout: 30000 });
  if (await card.locator('pre.terminal', { hasText: 'e2e-denied-77' }).count() > 0) throw new Error('the refused command ran');
  // A step of a session loaded again has an id of its own: it never merges
  // into an earlier card (the write's, with its diff).
  if (await card.locator('ul.diffs').count() > 0) throw new Error('the refused call was merged into an earlier tool card');
});
await screenshot('denied');

await check('Allow always: the next command of the session runs without asking', async () => {
  await view.locator('#input').fill('E2E-ALWAYS: run two commands.');
  await view.locator('#input').press('Enter');
  const first = view.locator('.card.tool', { hasText: 'echo e2e-always-one' }).first();
  const always = first.locator('.approve button', { hasText: /^Allow always$/ });
  await always.waitFor({ state: 'visible', timeout: 30000 });
  await always.click();
  const second = view.locator('.card.tool', { hasText: 'echo e2e-always-two' }).first();
  await second.locator('pre.terminal', { hasText: 'e2e-always-two' }).waitFor({ state: 'attached', timeout: 30000 }); // the card may be folded
  if (await second.locator('.approve button').count() > 0) throw new Error('the second command was asked for again');
  await view.locator('.msg.answer', { hasText: 'e2e-always-ok' }).waitFor({ timeout: 30000 });
});
await screenshot('allowed-always');

await check('plan mode (the Mode switch): a write is refused, the answer is the plan; back to Default', async () => {
  await view.locator('#new').click();
  await view.locator('#log .empty').waitFor({ timeout: 15000 });
  const mode = view.locator('#mode');
  await mode.selectOption('plan');
  await view.locator('#input').fill('E2E-PLAN: write plan.txt.');
  await view.locator('#input').press('Enter');
  await view.locator('.msg.answer', { hasText: 'e2e-plan-ok' }).waitFor({ timeout: 30000 });
  const card = view.locator('.card.tool.status-failed', { hasText: 'Writing plan.txt' }).first();
  await card.waitFor({ state: 'attached', timeout: 10000 });
  if (fs.existsSync(path.join(folder, 'plan.txt'))) throw new Error('plan.txt was written in plan mode');
  if ((await mode.inputValue()) !== 'plan') throw new Error(`the switch shows ${await mode.inputValue()} in a plan-mode session`);
  await mode.selectOption('default');
  // The server's mode_changed comes back to the view: the switch stays on Default.
  await view.locator('body:not(.plan)').waitFor({ state: 'attached', timeout: 10000 });
  if ((await mode.inputValue()) !== 'default') throw new Error('the switch did not stay on Default');
});
await screenshot('plan-mode');

await check('the agent\'s plan (todo:write) shows as a checklist', async () => {
  await view.locator('#input').fill('E2E-TODO: plan the fix.');
  await view.locator('#input').press('Enter');
  await view.locator('.msg.answer', { hasText: 'e2e-todo-ok' }).waitFor({ timeout: 30000 });
  const plan = view.locator('.plan', { hasText: 'Plan · 1 of 3 done' });
  await plan.waitFor({ timeout: 10000 });
  await plan.locator('.step.status-in_progress', { hasText: 'Write the e2e fix' }).waitFor({ timeout: 5000 });
  await plan.locator('.step.status-completed', { hasText: 'Read the e2e notes' }).waitFor({ timeout: 5000 });
});
await screenshot('plan-checklist');

await check('the / menu offers the workspace\'s saved commands; Tab takes one and Enter runs it', async () => {
  fs.mkdirSync(path.join(folder, '.claude', 'commands'), { recursive: true });
  fs.writeFileSync(path.join(folder, '.claude', 'commands', 'e2e-check.md'), '---\ndescription: Check the e2e notes\nargument-hint: TOPIC\n---\nE2E-SLASH about $1\n');
  const input = view.locator('#input');
  await input.fill('');
  await input.pressSequentially('/e2e');
  const item = view.locator('#slash li', { hasText: '/e2e-check TOPIC' });
  await item.waitFor({ timeout: 15000 });
  if (!(await item.textContent()).includes('Check the e2e notes')) throw new Error('the menu lacks the description');
  await input.press('Tab');
  if ((await input.inputValue()) !== '/e2e-check ') throw new Error(`Tab gave ${JSON.stringify(await input.inputValue())}`);
  await input.pressSequentially('notes');
  await input.press('Enter');
  await view.locator('.msg.answer', { hasText: 'e2e-slash-ok' }).waitFor({ timeout: 30000 });
});
await screenshot('saved-command');

/** Clicks a view container's activity-bar item ("Explorer", "Zero"). */
async function showContainer(label) {
  await page.locator(`.activitybar .action-item a[aria-label^="${label}"], .activitybar .action-item[aria-label^="${label}"]`).first().click();
}

await check('an approval while the Zero view is hidden comes as a notification; Allow there runs it', async () => {
  // A new session: the last one allows every command ("Allow always").
  await view.locator('#new').click();
  await view.locator('#log .empty').waitFor({ timeout: 15000 });
  await view.locator('#input').fill('E2E-HIDDEN: run it while I look at the files.');
  await view.locator('#input').press('Enter');
  await view.locator('.msg.user', { hasText: 'E2E-HIDDEN' }).waitFor({ timeout: 15000 });
  await showContainer('Explorer'); // the reply streams for a few seconds: the approval arrives unseen
  await view.locator('#input').waitFor({ state: 'hidden', timeout: 10000 });
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Zero wants to run' }).first();
  await toast.waitFor({ state: 'visible', timeout: 30000 });
  await screenshot('hidden-notification');
  await toast.locator('.monaco-button', { hasText: /^Allow$/ }).first().click();
  await showContainer('Zero');
  const card = view.locator('.card.tool', { hasText: 'echo e2e-hidden-88' }).first();
  await card.locator('pre.terminal', { hasText: 'e2e-hidden-88' }).waitFor({ state: 'attached', timeout: 30000 });
  await card.locator('.approval.approved').waitFor({ state: 'attached', timeout: 10000 });
  await view.locator('.msg.answer', { hasText: 'e2e-hidden-ok' }).waitFor({ timeout: 30000 });
});
await screenshot('hidden-allowed');

await check('a subordinate agent\'s work is nested under its card, approvals included', async () => {
  await view.locator('#input').fill('E2E-DELEGATE: let a subordinate do it.');
  await view.locator('#input').press('Enter');
  await view.locator('.subagent', { hasText: 'Agent 1' }).first().waitFor({ timeout: 30000 });
  // The subordinate's command: a nested card, waiting for approval.
  const nested = view.locator('.block.nested .card.tool', { hasText: 'echo e2e-sub-33' }).first();
  const allow = nested.locator('.approve button', { hasText: /^Allow$/ });
  await allow.waitFor({ state: 'visible', timeout: 30000 });
  await screenshot('subordinate-approval');
  await allow.click();
  await nested.locator('pre.terminal', { hasText: 'e2e-sub-33' }).waitFor({ state: 'attached', timeout: 30000 });
  await view.locator('.subagent.ended', { hasText: 'Agent 1' }).first().waitFor({ timeout: 30000 });
  await view.locator('.msg.answer', { hasText: 'e2e-delegate-ok' }).waitFor({ timeout: 30000 });
  // The parent's answer is not nested; the subordinate's thoughts are.
  if (await view.locator('.block.nested', { hasText: 'e2e-delegate-ok' }).count() > 0) throw new Error('the parent\'s answer is drawn as the subordinate\'s');
  if (await view.locator('.block.nested', { hasText: 'I am the subordinate' }).count() === 0) throw new Error('the subordinate\'s thoughts are not nested');
});
await screenshot('subordinate');

// A 24×24 PNG of four coloured squares, as a screenshot pasted from the clipboard would be.
const QUADRANTS_PNG = 'iVBORw0KGgoAAAANSUhEUgAAABgAAAAYCAIAAABvFaqvAAAAO0lEQVR4nGJ5pqHBQAg49YgQVMNEUAWRYNSgUYOGp0EsThr7CCq6JGJBUM3g89qoQaMGDSqDAAEAAP//k9gEk54KMeQAAAAASUVORK5CYII=';

await check('a pasted picture: a thumbnail in the composer, sent with the message (the model\'s request holds it), shown in the transcript', async () => {
  const input = view.locator('#input');
  await input.fill('');
  // What the clipboard gives a paste: a DataTransfer holding a PNG File.
  await input.evaluate((el, b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], 'e2e-quadrants.png', { type: 'image/png' }));
    el.focus();
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  }, QUADRANTS_PNG);
  const pending = view.locator('#attached .attachment', { hasText: 'e2e-quadrants.png' });
  await pending.waitFor({ timeout: 10000 });
  if (!(await pending.locator('img').getAttribute('src'))?.startsWith('data:image/png;base64,')) throw new Error('the composer\'s thumbnail is not the picture');
  await input.fill('E2E-IMAGE: what is in this picture?');
  await screenshot('picture-pasted');
  await input.press('Enter');
  await view.locator('#attached').waitFor({ state: 'hidden', timeout: 10000 });
  // The model's first request holds the picture as an image part: the scripted model refuses it as a
  // text-only model does (replies.json), and Zero sends the turn again with the picture described in
  // words ("[image e2e-quadrants.png, 24×24: …]"), which only a request that held it gets. That second
  // request is what the answer matches.
  await view.locator('.msg.answer', { hasText: 'e2e-image-ok' }).waitFor({ timeout: 30000 });
  // The transcript shows the message's picture, fetched from the server (zero/image) by its sha256.
  const thumb = view.locator('.msg.user', { hasText: 'E2E-IMAGE' }).locator('img.thumb[src^="data:image/png;base64,"]');
  await thumb.waitFor({ timeout: 15000 });
  const size = await thumb.evaluate(async (img) => { await img.decode(); return [img.naturalWidth, img.naturalHeight]; });
  if (size[0] !== 24 || size[1] !== 24) throw new Error(`the transcript's picture is ${size.join('×')}, want 24×24`);
});
await screenshot('picture-sent');

await check('vision_load: the agent loads a workspace picture, and its tool card shows it', async () => {
  fs.writeFileSync(path.join(folder, 'e2e-shot.png'), Buffer.from(QUADRANTS_PNG, 'base64'));
  const input = view.locator('#input');
  await input.fill('E2E-VISION: look at e2e-shot.png');
  await input.press('Enter');
  await view.locator('.msg.answer', { hasText: 'e2e-vision-ok' }).waitFor({ timeout: 30000 });
  // The tool_result names the picture; the view fetches it (zero/image) and draws it under the card.
  await view.locator('.card.tool', { hasText: 'vision_load' }).locator('img.thumb[src^="data:image/png;base64,"]').first().waitFor({ timeout: 15000 });
});
await screenshot('vision-load');

let sessionCount = 0;
await check('after a window reload the session and the list are restored from the server', async () => {
  await page.reload();
  await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
  // VS Code brings the Zero view back by itself, in its own time: the view's Focus command shows it
  // either way (clicking the icon would close a side bar restored meanwhile).
  await runCommand('Zero: Focus on Chat View');
  await view.locator('#input').waitFor({ state: 'visible', timeout: 30000 });
  await view.locator('.msg.answer', { hasText: 'e2e-delegate-ok' }).waitFor({ timeout: 30000 });
  await view.locator('.msg.user', { hasText: 'E2E-HIDDEN' }).waitFor({ timeout: 10000 });
  // The replayed message's picture comes from the restarted server (the session's store).
  await view.locator('.msg.user', { hasText: 'E2E-IMAGE' }).locator('img.thumb[src^="data:image/png;base64,"]').waitFor({ state: 'attached', timeout: 20000 });
  const sel = view.locator('#sessions');
  await sel.focus();
  const deadline = Date.now() + 15000;
  let titles = [];
  while (Date.now() < deadline) {
    titles = await sel.locator('option').evaluateAll((os) => os.filter((o) => o.value).map((o) => o.textContent || ''));
    if (['Run the e2e command please.', 'E2E-WRITE-NOTES', 'E2E-HIDDEN'].every((w) => titles.some((t) => t.includes(w)))) break;
    await page.waitForTimeout(300);
  }
  if (!['Run the e2e command please.', 'E2E-WRITE-NOTES', 'E2E-HIDDEN'].every((w) => titles.some((t) => t.includes(w)))) {
    throw new Error(`the session list after the reload: ${JSON.stringify(titles)}`);
  }
  sessionCount = titles.length;
});
await screenshot('reloaded');

await check('Zero: Ask (command palette) asks for a prompt and sends it', async () => {
  await runCommand('Zero: Ask');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill('E2E-ASK: a question from the palette.');
  await input.press('Enter');
  await view.locator('.msg.user', { hasText: 'E2E-ASK' }).waitFor({ timeout: 15000 });
  await view.locator('.msg.answer', { hasText: 'e2e-ask-ok' }).waitFor({ timeout: 30000 });
});
await screenshot('ask');

await check('rename the session (✎): the list shows the new title', async () => {
  await view.locator('#rename').click();
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill('Renamed by e2e');
  await input.press('Enter');
  await view.locator('#sessions option', { hasText: 'Renamed by e2e' }).waitFor({ state: 'attached', timeout: 15000 });
});
await screenshot('renamed');

await check('delete the session (✕, confirmed): it leaves the list and the view', async () => {
  await view.locator('#delete').click();
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor({ state: 'visible', timeout: 10000 });
  await screenshot('delete-confirm');
  await dialog.locator('.monaco-button', { hasText: /^Delete$/ }).click();
  await view.locator('#sessions option', { hasText: 'Renamed by e2e' }).waitFor({ state: 'detached', timeout: 15000 });
  await view.locator('#log .empty').waitFor({ timeout: 15000 });
  const left = await view.locator('#sessions option').evaluateAll((os) => os.filter((o) => o.value).map((o) => o.textContent || ''));
  if (left.length !== sessionCount - 1 || !left.some((t) => t.includes('Run the e2e command please.'))) {
    throw new Error(`the sessions left: ${JSON.stringify(left)} (there were ${sessionCount})`);
  }
});
await screenshot('deleted');

await check('Undo on a run: a change of yours is asked about (Keep my changes), the run\'s edit and its new file go back', async () => {
  const readme = path.join(folder, 'README.txt');
  const original = fs.readFileSync(readme, 'utf8');
  const input = view.locator('#input');
  await input.fill('E2E-UNDO: change the readme and make a file.');
  await input.press('Enter');
  const user = view.locator('.msg.user', { hasText: 'E2E-UNDO' });
  await user.waitFor({ timeout: 15000 });
  // Two steps to allow: the text_editor write, then the command.
  for (const what of ['README.txt', 'e2e-made.txt']) {
    const allow = view.locator('.card.tool', { hasText: what }).locator('.approve button', { hasText: /^Allow$/ }).first();
    await allow.waitFor({ state: 'visible', timeout: 30000 });
    await allow.click();
  }
  await view.locator('.msg.answer', { hasText: 'e2e-undo-ok' }).waitFor({ timeout: 30000 });
  if (fs.readFileSync(readme, 'utf8') !== 'changed by e2e-undo\n') throw new Error('the run did not change README.txt');
  if (!fs.existsSync(path.join(folder, 'e2e-made.txt'))) throw new Error('the run did not make e2e-made.txt');
  // The run's message carries its checkpoint: Rewind… and, the newest, Undo.
  await user.locator('.checkpoint', { hasText: 'Checkpoint' }).waitFor({ timeout: 10000 });
  await user.locator('button.rewind').waitFor({ timeout: 10000 });
  await screenshot('checkpoint');
  // A file of the user's, made after the run: the undo asks about it.
  fs.writeFileSync(path.join(folder, 'e2e-mine.txt'), 'mine\n');
  await user.locator('button.undo').click();
  const dialog = page.locator('.monaco-dialog-box', { hasText: 'changed outside Zero' });
  await dialog.waitFor({ state: 'visible', timeout: 15000 });
  if (!(await dialog.innerText()).includes('e2e-mine.txt')) throw new Error(`the question does not name the file: ${await dialog.innerText()}`);
  await screenshot('undo-conflict');
  await dialog.locator('.monaco-button', { hasText: /^Keep my changes$/ }).click();
  await view.locator('.notice.rewound', { hasText: 'rewound to checkpoint' }).waitFor({ timeout: 30000 });
  await view.locator('.block.undone .msg.user', { hasText: 'E2E-UNDO' }).waitFor({ timeout: 10000 });
  const now = fs.readFileSync(readme, 'utf8');
  if (now !== original) throw new Error(`README.txt after the undo holds ${JSON.stringify(now)}, want ${JSON.stringify(original)}`);
  if (fs.existsSync(path.join(folder, 'e2e-made.txt'))) throw new Error('e2e-made.txt is still there after the undo');
  if (fs.readFileSync(path.join(folder, 'e2e-mine.txt'), 'utf8') !== 'mine\n') throw new Error('the user\'s file was not kept');
  if (await view.locator('button.undo').count() > 0) throw new Error('an Undo is still offered after the only run was undone');
});
await screenshot('undone');

await check('an MCP server asks during its tool\'s call: the question card in the view, "Ada" submitted, the answer reaches the server', async () => {
  // The server "bookings" (e2e/asking-mcp-server.mjs, in the user's config.yaml written by
  // scripts/vscode-e2e): its tool book asks, during the call, whose name the table is under.
  await view.locator('#new').click();
  await view.locator('#log .empty').waitFor({ timeout: 15000 });
  const input = view.locator('#input');
  await input.fill('E2E-BOOK: book a table for tonight.');
  await input.press('Enter');
  // An MCP server's tool is asked about first (zero.approval: ask).
  const tool = view.locator('.card.tool', { hasText: 'bookings.book' }).first();
  const allow = tool.locator('.approve button', { hasText: /^Allow$/ });
  await allow.waitFor({ state: 'visible', timeout: 30000 });
  await allow.click();
  const card = view.locator('.card.question', { hasText: 'Which name is the booking under?' });
  await card.waitFor({ state: 'visible', timeout: 30000 });
  const title = (await card.locator('.title').innerText()).trim();
  if (title !== 'The MCP server "bookings" asks') throw new Error(`the card's title is ${JSON.stringify(title)}`);
  const form = card.locator('form.question-form');
  const name = form.getByLabel('Name');
  const seats = form.getByLabel('Seats');
  await name.waitFor({ state: 'visible', timeout: 5000 });
  if ((await seats.inputValue()) !== '2') throw new Error(`Seats holds ${JSON.stringify(await seats.inputValue())}, want the server's default 2`);
  await name.fill('Ada');
  await screenshot('mcp-question');
  await card.locator('.approve button', { hasText: /^Submit$/ }).click();
  // Answered: the card goes, the call ends with what the server made of the answer.
  await card.waitFor({ state: 'detached', timeout: 30000 });
  const result = tool.locator('pre.result', { hasText: 'booked for Ada, 2 seats' });
  await result.waitFor({ state: 'attached', timeout: 30000 });
  await tool.locator('summary', { hasText: /^Result$/ }).click(); // unfolded for the screenshot
  await result.waitFor({ state: 'visible', timeout: 5000 });
  // The scripted model answers only a request that holds the tool's result (replies.json).
  await view.locator('.msg.answer', { hasText: 'e2e-book-ok' }).waitFor({ timeout: 30000 });
  if (!(await view.locator('.msg.answer', { hasText: 'e2e-book-ok' }).innerText()).includes('booked for Ada, 2 seats')) throw new Error('the answer lacks the tool\'s result');
});
await screenshot('mcp-answered');

await finish();
