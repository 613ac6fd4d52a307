// The Zero view's script (runs in the webview). It draws the blocks the
// extension's SessionModel sends, redrawing only blocks whose rev changed,
// and sends the user's actions back. Text goes in with textContent; only
// the Markdown renderer (which escapes any HTML of the source) uses
// innerHTML.

import {
  MAX_ATTACHMENTS,
  addAttachments,
  dataURL,
  formatBytes,
  fromDataURL,
  mimeFor,
  pastedName,
  refusal,
  type PendingAttachment,
} from '../attachments';
import type { Block, CheckpointMark, NoticeBlock, Status, ToolBlock } from '../model';
import type { Command, ImageRef, Mode, RewindReport, SessionInfo } from '../protocol';
import { BUILTINS, describeCheckpoint } from '../rewind';
import { renderMarkdown } from '../markdown';
import { loginName, questionCard, type QuestionCard, type RawValues } from '../questions';
import type { FromView, ToView } from './messages';

declare function acquireVsCodeApi(): { postMessage(m: FromView): void; getState(): unknown; setState(s: unknown): void };
const vscode = acquireVsCodeApi();
const send = (m: FromView) => vscode.postMessage(m);

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const log = $<HTMLElement>('log');
const input = $<HTMLTextAreaElement>('input');
const sendBtn = $<HTMLButtonElement>('send');
const stopBtn = $<HTMLButtonElement>('stop');
const stateEl = $<HTMLElement>('state');
const sessionsEl = $<HTMLSelectElement>('sessions');
const banner = $<HTMLElement>('banner');
const approvalsEl = $<HTMLElement>('approvals');
const modeEl = $<HTMLSelectElement>('mode');
const renameBtn = $<HTMLButtonElement>('rename');
const slash = $<HTMLUListElement>('slash');
const deleteBtn = $<HTMLButtonElement>('delete');
const composer = $<HTMLElement>('composer');
const attachBtn = $<HTMLButtonElement>('attach');
const attachedEl = $<HTMLElement>('attached');
const composerError = $<HTMLElement>('composer-error');

interface Drawn {
  rev: number;
  el: HTMLElement;
}
const drawn = new Map<string, Drawn>();
/** Which <details> the user opened or closed, by key, kept across redraws. */
const open = new Map<string, boolean>();
let session: string | null = null;
let status: Status | null = null;
const blocks = new Map<string, Block>();

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(label: string, cls: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = el('button', cls, label);
  if (title) b.title = title;
  b.addEventListener('click', (ev) => {
    ev.stopPropagation();
    onClick();
  });
  return b;
}

function details(key: string, summary: HTMLElement | string, body: HTMLElement, openByDefault: boolean): HTMLDetailsElement {
  const d = el('details');
  const s = el('summary');
  if (typeof summary === 'string') s.textContent = summary;
  else s.append(summary);
  d.append(s, body);
  d.open = open.get(key) ?? openByDefault;
  d.addEventListener('toggle', () => open.set(key, d.open));
  return d;
}

function markdown(text: string): HTMLElement {
  const div = el('div', 'markdown');
  div.innerHTML = renderMarkdown(text);
  return div;
}

function shorten(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

function argsText(args: unknown): string {
  if (args === undefined || args === null) return '';
  if (typeof args === 'string') return args;
  try {
    return JSON.stringify(args, null, 2);
  } catch {
    return String(args);
  }
}

/** The command a tool call runs, when it has one, for its one-line summary. */
function subject(args: unknown): string {
  if (args && typeof args === 'object') {
    const a = args as Record<string, unknown>;
    for (const k of ['code', 'command', 'path', 'url', 'query', 'message']) if (typeof a[k] === 'string') return a[k] as string;
  }
  return '';
}

// ---- pictures of the transcript ----
// Events name a picture by sha256 (a user's attachment, a tool's image);
// its data comes from the server (zero/image, through the extension) as a
// data: URL, once, and is kept here by hash.

const MAX_KEPT_PICTURES = 200;
const pictureURLs = new Map<string, string>();
const pictureFailed = new Map<string, string>();
const pictureAsked = new Set<string>();

function keepPicture(sha: string, url: string): void {
  pictureURLs.delete(sha);
  pictureURLs.set(sha, url);
  while (pictureURLs.size > MAX_KEPT_PICTURES) {
    const oldest = pictureURLs.keys().next().value;
    if (oldest === undefined) break;
    pictureURLs.delete(oldest);
  }
}

function pictureLabel(ref: ImageRef): string {
  return `${ref.name || 'picture'}${ref.width && ref.height ? ` · ${ref.width}×${ref.height}` : ''}`;
}

/** Shows a picture's data in img (data-sha256), asking for it once if it is not here yet. */
function fillPicture(img: HTMLImageElement): void {
  const sha = img.dataset.sha256 ?? '';
  const url = pictureURLs.get(sha);
  if (url) {
    img.src = url;
    img.classList.remove('loading');
    return;
  }
  const why = pictureFailed.get(sha);
  if (why !== undefined) {
    const gone = el('span', 'thumb missing', `${img.alt} (not available)`);
    gone.title = why;
    img.replaceWith(gone);
    return;
  }
  img.classList.add('loading');
  if (!pictureAsked.has(sha) && session) {
    pictureAsked.add(sha);
    send({ type: 'image', session, sha256: sha });
  }
}

/** The pictures of a message or a tool result, or null without any. */
function pictures(refs: ImageRef[] | undefined): HTMLElement | null {
  if (!refs || refs.length === 0) return null;
  const box = el('div', 'pictures');
  for (const ref of refs) {
    const fig = el('figure', 'picture');
    const img = el('img', 'thumb');
    img.dataset.sha256 = ref.sha256.toLowerCase();
    img.alt = ref.name || 'picture';
    img.title = `${pictureLabel(ref)} (click to enlarge)`;
    img.addEventListener('click', (ev) => {
      ev.stopPropagation();
      fig.classList.toggle('expanded');
    });
    fig.append(img);
    if (ref.name) fig.append(el('figcaption', undefined, ref.name));
    box.append(fig);
    fillPicture(img);
  }
  return box;
}

const statusLabel: Record<ToolBlock['status'], string> = {
  pending: 'pending',
  awaiting_approval: 'waiting for approval',
  running: 'running',
  completed: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
};

function drawTool(b: ToolBlock): HTMLElement {
  // A command the call left running is shown as running, in plain words.
  const still = b.stillRunning === true && b.status === 'completed';
  const card = el('div', `card tool status-${still ? 'running' : b.status}`);
  const head = el('span', 'head');
  head.append(el('span', 'badge', still ? 'still running' : statusLabel[b.status]), el('span', 'title', b.title || b.tool));
  const sub = subject(b.args);
  if (sub) head.append(el('code', 'subject', shorten(sub, 80)));
  const body = el('div', 'body');
  body.append(el('div', 'meta', `${b.tool}${b.method ? `:${b.method}` : ''}${b.toolKind ? ` · ${b.toolKind}` : ''}`));
  if (b.pull) body.append(el('div', 'pull', b.pull));
  const a = argsText(b.args);
  if (a) body.append(details(`${b.id}:args`, 'Arguments', el('pre', 'args', a), false));
  if (b.output) {
    const pre = el('pre', 'terminal', (b.truncated ? '…\n' : '') + b.output);
    body.append(pre);
    queueMicrotask(() => (pre.scrollTop = pre.scrollHeight));
  }
  if (still) body.append(el('div', 'meta', 'Still running: the agent can wait for it, type into it or stop it.'));
  if (b.result !== undefined && b.result.trim() !== '' && b.result.trim() !== b.output.trim()) {
    body.append(details(`${b.id}:result`, 'Result', el('pre', 'result', b.result), b.status === 'failed'));
  }
  if (b.approval) {
    const ap = b.approval;
    if (ap.status === 'pending') body.append(approvalButtons(ap.id));
    else body.append(el('div', `approval ${ap.status}`, `${ap.status === 'approved' ? 'Allowed' : ap.status === 'denied' ? 'Denied' : 'No longer asked'}${ap.reason ? `: ${ap.reason}` : ''}`));
  }
  if (b.diffs.length > 0) {
    const list = el('ul', 'diffs');
    b.diffs.forEach((d, i) => {
      const li = el('li');
      li.append(el('span', 'path', `${d.old_text === null ? 'created ' : 'changed '}${d.path}`));
      li.append(button('Open diff', 'link', () => send({ type: 'openDiff', block: b.id, index: i })));
      li.append(button('Open file', 'link', () => send({ type: 'openFile', path: d.path })));
      list.append(li);
    });
    body.append(list);
  }
  const openNow = b.status === 'running' || b.status === 'awaiting_approval' || b.diffs.length > 0;
  card.append(details(b.id, head, body, openNow));
  // The tool's pictures under the call, shown while the card is folded too.
  const pics = pictures(b.images);
  if (pics) card.append(pics);
  return card;
}

function approvalButtons(id: string): HTMLElement {
  const row = el('div', 'approve');
  row.append(
    button('Allow', 'primary', () => send({ type: 'approve', id, approve: true, always: false })),
    button('Allow always', 'secondary', () => send({ type: 'approve', id, approve: true, always: true }), 'Allow this and calls like it for the rest of the session'),
    button('Deny', 'secondary', () => send({ type: 'approve', id, approve: false, always: false })),
  );
  return row;
}

/**
 * The line under a run's message (or a compaction's notice): what its
 * checkpoint covers, Rewind… and, on the newest, Undo.
 */
function checkpointRow(mark: CheckpointMark): HTMLElement {
  const { ref, newest } = mark;
  const row = el('div', 'checkpoint');
  const what = el('span', 'dim', describeCheckpoint(ref));
  const notes = [...(ref.skipped ?? []).map((s) => `not covered: ${s}`), ...(ref.error ? [ref.error] : [])];
  if (notes.length > 0) what.title = notes.join('\n');
  row.append(what);
  const which = ref.kind === 'compact' ? 'the compaction' : `run ${ref.run}`;
  const rewind = button('Rewind…', 'link rewind', () => send({ type: 'rewind', checkpoint: ref.id }), `Go back to before ${which}: files, conversation or both`);
  rewind.setAttribute('aria-label', `Rewind to before ${which}`);
  row.append(rewind);
  if (newest) {
    const undo = button('Undo', 'link undo', () => send({ type: 'undo' }), `Take back ${which}: ${ref.kind === 'compact' ? 'the conversation as it was' : 'its file changes and its part of the conversation'}`);
    undo.setAttribute('aria-label', `Undo ${which}`);
    row.append(undo);
  }
  return row;
}

/** A rewound notice: the server's line, the files it touched, and what still runs. */
function drawRewound(b: NoticeBlock, r: RewindReport): HTMLElement {
  const d = el('div', 'notice info rewound', b.text);
  const files: [string, string[] | undefined][] = [
    ['restored', r.restored],
    ['removed', r.deleted],
    ['kept (changed by you)', r.kept],
    ['not restored', r.failed],
  ];
  const list = el('ul', 'rewound-files');
  for (const [what, paths] of files) for (const p of paths ?? []) list.append(el('li', undefined, `${what}: ${p}`));
  if (list.childElementCount > 0) d.append(details(`${b.id}:files`, `Files (${list.childElementCount})`, list, list.childElementCount <= 5));
  if (r.running && r.running.length > 0) {
    const w = el('div', 'notice warning');
    w.append(el('div', undefined, 'Still running in the sandbox; Zero cannot undo what they do from now on:'));
    const ul = el('ul');
    for (const p of r.running) ul.append(el('li', undefined, p));
    w.append(ul);
    d.append(w);
  }
  return d;
}

// ---- a server's questions ----
// What the person typed into a question's form is kept by question id, so
// a redraw (the view shown again) does not lose it; a card whose answer
// the server refused shows why.
const drafts = new Map<string, RawValues>();
const cards = new Map<string, QuestionCard>();

function drawQuestion(b: Extract<Block, { kind: 'question' }>): HTMLElement | null {
  const q = b.question;
  const card = questionCard(
    document,
    b,
    {
      answer: (action, content) => send(content ? { type: 'answer', id: q.id, action, content } : { type: 'answer', id: q.id, action }),
      open: () => send({ type: 'openQuestionPage', id: q.id }),
      changed: (v) => drafts.set(q.id, v),
    },
    drafts.get(q.id),
  );
  if (!card) {
    drafts.delete(q.id);
    cards.delete(q.id);
    return null;
  }
  cards.set(q.id, card);
  return card.el;
}

function draw(b: Block): HTMLElement | null {
  switch (b.kind) {
    case 'question':
      return drawQuestion(b);
    case 'user': {
      const d = el('div', `msg user${b.intervention ? ' intervention' : ''}`);
      if (b.undone) d.append(el('div', 'label', 'Undone: the agent no longer knows this run'));
      if (b.intervention) d.append(el('div', 'label', 'Sent during the run'));
      if (b.text !== '') d.append(el('div', 'text', b.text));
      const pics = pictures(b.images);
      if (pics) d.append(pics);
      if (b.checkpoint && !b.undone) d.append(checkpointRow(b.checkpoint));
      return d;
    }
    case 'reasoning':
      return details(b.id, 'Reasoning', el('div', 'dim pre', b.text), false);
    case 'thoughts': {
      const d = details(b.id, b.headline ? `Thoughts · ${b.headline}` : 'Thoughts', el('div', 'dim pre', b.text), false);
      d.classList.add('thoughts');
      return d;
    }
    case 'tool':
      return b.hidden ? null : drawTool(b);
    case 'answer': {
      const d = el('div', `msg answer${b.final ? '' : ' streaming'}`);
      d.append(markdown(b.text));
      d.addEventListener('click', (ev) => {
        const a = (ev.target as HTMLElement).closest('a');
        if (a) {
          ev.preventDefault();
          send({ type: 'openLink', href: a.getAttribute('href') ?? '' });
        }
      });
      return d;
    }
    case 'notice': {
      if (b.rewind) return drawRewound(b, b.rewind);
      const d = el('div', `notice ${b.level}`, b.text);
      if (b.tokens) d.append(el('span', 'dim', ` (${b.tokens.before} → ${b.tokens.after} tokens)`));
      const login = loginName(b.text);
      if (login) {
        d.append(' ', button('Log in', 'secondary', () => send({ type: 'mcpLogin', name: login }), `Run \`zero mcp login ${login}\` in a terminal`));
      }
      if (b.fork) {
        const from = b.fork.from;
        d.append(' ', button('Open the original', 'link', () => send({ type: 'switch', id: from }), `Session ${from}`));
      }
      if (b.checkpoint && !b.undone) d.append(checkpointRow(b.checkpoint));
      return d;
    }
    case 'plan': {
      const done = b.items.filter((it) => it.status === 'completed').length;
      const d = el('div', 'plan');
      d.append(el('div', 'label', `Plan · ${done} of ${b.items.length} done`));
      const list = el('ul', 'checklist');
      for (const it of b.items) {
        const li = el('li', `step status-${it.status}`);
        li.append(el('span', 'mark', it.status === 'completed' ? '✓' : it.status === 'in_progress' ? '▸' : '○'), el('span', 'text', it.content));
        if (it.priority === 'high') li.append(el('span', 'badge', 'high'));
        list.append(li);
      }
      d.append(list);
      return d;
    }
    case 'subagent': {
      const d = el('div', `subagent${b.ended ? ' ended' : ''}`);
      const head = el('div', 'label', `Agent ${b.number}${b.profile ? ` (${b.profile})` : ''}${b.ended ? (b.error ? ' · failed' : ' · done') : ' · working'}`);
      d.append(head, el('div', 'dim', shorten(b.message, 200)));
      if (b.ended && b.error) d.append(el('div', 'notice error', b.error));
      else if (b.ended && b.answer) d.append(details(`${b.id}:answer`, 'Its answer', markdown(b.answer), false));
      return d;
    }
  }
}

function depthOf(b: Block): number {
  let n = 0;
  let p = b.parent;
  while (p && n < 20) {
    n++;
    p = blocks.get(p)?.parent;
  }
  return n;
}

function place(b: Block): void {
  const prev = drawn.get(b.id);
  if (prev && prev.rev === b.rev) return;
  const node = draw(b) ?? el('div', 'hidden');
  const wrap = el('div', b.undone ? 'block undone' : 'block');
  wrap.dataset.id = b.id;
  const depth = depthOf(b);
  if (depth > 0) {
    wrap.classList.add('nested');
    wrap.style.setProperty('--depth', String(depth));
  }
  wrap.append(node);
  if (prev) prev.el.replaceWith(wrap);
  else log.append(wrap);
  drawn.set(b.id, { rev: b.rev, el: wrap });
}

function nearBottom(): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
}

function apply(list: Block[]): void {
  const stick = nearBottom();
  for (const b of list) {
    blocks.set(b.id, b);
    place(b);
  }
  if (stick) log.scrollTop = log.scrollHeight;
}

/** The mode switch: the modes the server offers, the current one chosen; hidden without any. */
function drawModes(modes: Mode[], mode: string): void {
  if (modes.map((m) => m.id).join() !== [...modeEl.options].map((o) => o.value).join()) {
    modeEl.replaceChildren(
      ...modes.map((m) => {
        const o = el('option', undefined, m.name);
        o.value = m.id;
        o.title = m.description;
        return o;
      }),
    );
  }
  modeEl.hidden = modes.length === 0;
  modeEl.value = mode;
  document.body.classList.toggle('plan', mode === 'plan');
}

function drawStatus(): void {
  const run = status?.run ?? 'idle';
  if (status?.mode && modeEl.options.length > 0) {
    modeEl.value = status.mode;
    document.body.classList.toggle('plan', status.mode === 'plan');
  }
  stopBtn.hidden = run === 'idle';
  stateEl.textContent =
    run === 'running'
      ? 'Running… a message now is an intervention'
      : run === 'waiting_approval'
        ? 'Waiting for your approval'
        : run === 'waiting_answer'
          ? 'An MCP server waits for your answer'
          : '';
  sendBtn.textContent = run === 'idle' ? 'Send' : 'Intervene';
  // Approvals of calls whose card is not shown (e.g. unknown items) still get buttons.
  approvalsEl.replaceChildren();
  for (const a of status?.approvals ?? []) {
    if (a.item && drawn.has(a.item)) continue;
    const d = el('div', 'card approval-card');
    d.append(el('div', 'title', `Zero wants to run: ${a.title || a.tool || 'a tool'}`));
    const args = argsText(a.args);
    if (args) d.append(el('pre', 'args', args));
    d.append(approvalButtons(a.id));
    approvalsEl.append(d);
  }
}

function drawSessions(list: SessionInfo[], current: string | null): void {
  sessionsEl.replaceChildren();
  const none = el('option', undefined, current ? '' : 'New session');
  none.value = '';
  if (!current) sessionsEl.append(none);
  const ids = new Set(list.map((s) => s.id));
  if (current && !ids.has(current)) {
    const o = el('option', undefined, 'Current session');
    o.value = current;
    sessionsEl.append(o);
  }
  for (const s of list) {
    const o = el('option', undefined, `${s.running ? '● ' : ''}${shorten(s.title || 'Untitled', 48)} · ${new Date(s.updated).toLocaleDateString()}`);
    o.value = s.id;
    o.title = s.id;
    sessionsEl.append(o);
  }
  sessionsEl.value = current ?? '';
  renameBtn.hidden = deleteBtn.hidden = !current;
}

window.addEventListener('message', (ev: MessageEvent<ToView>) => {
  const m = ev.data;
  switch (m.type) {
    case 'reset':
      if (m.session !== session) pictureFailed.clear(); // a picture one session lacks, another may have
      session = m.session;
      status = m.status;
      drawn.clear();
      blocks.clear();
      log.replaceChildren();
      if (m.blocks.length === 0) log.append(el('div', 'empty', session ? 'Send a message to start.' : 'Ask Zero to do something in this workspace.'));
      apply(m.blocks);
      log.scrollTop = log.scrollHeight;
      drawStatus();
      break;
    case 'patch':
      if (m.session !== session) return;
      log.querySelector(':scope > .empty')?.remove();
      status = m.status;
      apply(m.blocks);
      drawStatus();
      break;
    case 'commands':
      // The built-in commands first; a saved one of the same name is not run.
      commands = [...BUILTINS, ...m.commands.filter((c) => !BUILTINS.some((b) => b.name === c.name))];
      drawSlash();
      break;
    case 'image': {
      const sha = m.sha256.toLowerCase();
      pictureAsked.delete(sha);
      if (m.url) keepPicture(sha, m.url);
      else pictureFailed.set(sha, m.error ?? 'the server does not have it');
      for (const img of log.querySelectorAll<HTMLImageElement>(`img.thumb[data-sha256="${sha}"]`)) fillPicture(img);
      break;
    }
    case 'attachments':
      addPending(m.attachments, m.errors);
      break;
    case 'answerFailed':
      cards.get(m.id)?.showError(m.message);
      break;
    case 'sendFailed':
      // The message was refused before anything ran: it comes back.
      if (input.value.trim() === '') input.value = m.text;
      addPending(m.attachments, [], [`Not sent: ${m.message}`]);
      break;
    case 'server': {
      drawSessions(m.sessions, m.current);
      drawModes(m.modes, m.mode);
      banner.hidden = m.state !== 'failed' && m.state !== 'starting';
      banner.className = m.state === 'failed' ? 'error' : 'info';
      banner.replaceChildren(el('div', undefined, m.state === 'starting' ? 'Starting Zero…' : m.message));
      if (m.state === 'failed') {
        banner.append(
          button('Retry', 'secondary', () => send({ type: 'restart' })),
          button('Settings', 'secondary', () => send({ type: 'command', command: 'workbench.action.openSettings' })),
          button('Set API key', 'secondary', () => send({ type: 'command', command: 'zero.setApiKey' })),
          button('Show output', 'secondary', () => send({ type: 'command', command: 'zero.showOutput' })),
        );
      }
      break;
    }
  }
});

function submit(): void {
  const text = input.value;
  if (text.trim() === '' && pending.length === 0) return;
  input.value = '';
  slash.hidden = true;
  const attachments = pending;
  pending = [];
  drawAttached();
  showComposerError([]);
  send(attachments.length > 0 ? { type: 'send', text, attachments } : { type: 'send', text });
}

// ---- pictures to send: pasted, dropped or picked with Attach ----

let pending: PendingAttachment[] = [];
let pastedCount = 0;

function showComposerError(errors: string[]): void {
  composerError.replaceChildren(...errors.map((e) => el('div', undefined, e)));
  composerError.hidden = errors.length === 0;
}

function drawAttached(): void {
  attachedEl.replaceChildren(
    ...pending.map((a, i) => {
      const item = el('div', 'attachment');
      item.title = `${a.name} · ${formatBytes(a.size)}`;
      const img = el('img', 'thumb');
      img.alt = a.name;
      const url = dataURL(a.mimeType, a.data);
      if (url) img.src = url;
      const remove = button('×', 'remove', () => {
        pending.splice(i, 1);
        drawAttached();
        showComposerError([]);
        input.focus();
      }, `Remove ${a.name}`);
      remove.setAttribute('aria-label', `Remove ${a.name}`);
      item.append(img, el('span', 'name', a.name), remove);
      return item;
    }),
  );
  attachedEl.hidden = pending.length === 0;
}

/** Adds pictures to those waiting, within the limits; says what was not taken (before: errors of the caller's). */
function addPending(incoming: PendingAttachment[], errors: string[] = [], before: string[] = []): void {
  const r = addAttachments(pending, incoming);
  pending = r.pending;
  drawAttached();
  showComposerError([...before, ...errors, ...r.errors]);
}

function readAsDataURL(f: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error ?? new Error('the file could not be read'));
    r.readAsDataURL(f);
  });
}

/** Reads files given to the composer (pasted: named as such when they have no name of their own). */
async function readFiles(files: File[], pasted: boolean): Promise<void> {
  const errors: string[] = [];
  const read: PendingAttachment[] = [];
  for (const f of files) {
    const type = mimeFor({ name: f.name, type: f.type });
    const name = pasted ? pastedName(f.name, type, ++pastedCount) : f.name;
    const why = refusal({ name, type: f.type, size: f.size });
    if (why) {
      errors.push(why);
      continue;
    }
    if (pending.length + read.length >= MAX_ATTACHMENTS) {
      errors.push(`At most ${MAX_ATTACHMENTS} pictures go with one message: ${name} was not added.`);
      continue;
    }
    try {
      const parsed = fromDataURL(await readAsDataURL(f));
      if (!parsed) throw new Error('it gave no data');
      read.push({ name, mimeType: type, data: parsed.data, size: f.size });
    } catch (err) {
      errors.push(`${name} could not be read: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  addPending(read, errors);
}

/** The files a paste or a drop carries. */
function filesOf(dt: DataTransfer): File[] {
  if (dt.files && dt.files.length > 0) return [...dt.files];
  const out: File[] = [];
  for (const item of dt.items ?? []) {
    if (item.kind !== 'file') continue;
    const f = item.getAsFile();
    if (f) out.push(f);
  }
  return out;
}

/** The URIs of files dragged from VS Code's Explorer (no File objects then). */
function urisOf(dt: DataTransfer): string[] {
  const list = dt.getData('application/vnd.code.uri-list') || dt.getData('text/uri-list');
  return list
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

function carriesFiles(dt: DataTransfer | null): boolean {
  return !!dt && [...dt.types].some((t) => t === 'Files' || t === 'text/uri-list' || t === 'application/vnd.code.uri-list');
}

input.addEventListener('paste', (ev) => {
  const dt = ev.clipboardData;
  if (!dt) return;
  const files = filesOf(dt);
  if (files.length === 0) return; // text: pasted as usual
  ev.preventDefault();
  void readFiles(files, true);
});

composer.addEventListener('dragover', (ev) => {
  if (!carriesFiles(ev.dataTransfer)) return;
  ev.preventDefault();
  ev.dataTransfer!.dropEffect = 'copy';
  composer.classList.add('dropping');
});
composer.addEventListener('dragleave', () => composer.classList.remove('dropping'));
composer.addEventListener('drop', (ev) => {
  composer.classList.remove('dropping');
  const dt = ev.dataTransfer;
  if (!dt) return;
  const files = filesOf(dt);
  if (files.length > 0) {
    ev.preventDefault();
    void readFiles(files, false);
    return;
  }
  const uris = urisOf(dt);
  if (uris.length > 0) {
    ev.preventDefault();
    send({ type: 'attachUris', uris });
  }
});
attachBtn.addEventListener('click', () => send({ type: 'pickAttachments' }));

// The / menu: the saved commands (.zero/commands, .claude/commands, the
// user's), asked for each time a message starts with "/", filtered as the
// name is typed; Up/Down choose, Enter or Tab takes one, Escape closes it.
let commands: Command[] = BUILTINS;
let picked = 0;

function slashMatches(): Command[] {
  const prefix = /^\/(\S*)$/.exec(input.value)?.[1];
  return prefix === undefined ? [] : commands.filter((c) => c.name.startsWith(prefix));
}

function drawSlash(): void {
  const list = slashMatches();
  slash.hidden = list.length === 0;
  picked = Math.min(picked, Math.max(0, list.length - 1));
  slash.replaceChildren(
    ...list.map((c, i) => {
      const li = el('li', i === picked ? 'picked' : undefined);
      li.setAttribute('role', 'option');
      li.setAttribute('aria-selected', String(i === picked));
      li.title = c.source ?? '';
      li.append(el('span', 'name', '/' + c.name + (c.hint ? ' ' + c.hint : '')), el('span', 'desc', c.description ?? ''));
      li.addEventListener('mousedown', (ev) => {
        ev.preventDefault();
        take(c);
      });
      return li;
    }),
  );
}

function take(c: Command): void {
  input.value = '/' + c.name + ' ';
  slash.hidden = true;
  input.focus();
}

input.addEventListener('input', () => {
  if (input.value === '/') {
    picked = 0;
    send({ type: 'commands' });
  }
  drawSlash();
});

input.addEventListener('keydown', (ev) => {
  if (!slash.hidden && !ev.isComposing) {
    const list = slashMatches();
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      picked = (picked + (ev.key === 'ArrowDown' ? 1 : list.length - 1)) % list.length;
      drawSlash();
      return;
    }
    if ((ev.key === 'Enter' && !ev.shiftKey) || ev.key === 'Tab') {
      ev.preventDefault();
      const c = list[picked];
      if (c) take(c);
      return;
    }
    if (ev.key === 'Escape') {
      slash.hidden = true;
      return;
    }
  }
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    submit();
  }
});
sendBtn.addEventListener('click', submit);
stopBtn.addEventListener('click', () => send({ type: 'cancel' }));
$<HTMLButtonElement>('new').addEventListener('click', () => send({ type: 'newSession' }));
renameBtn.addEventListener('click', () => {
  if (sessionsEl.value) send({ type: 'renameSession', id: sessionsEl.value });
});
deleteBtn.addEventListener('click', () => {
  if (sessionsEl.value) send({ type: 'deleteSession', id: sessionsEl.value });
});
modeEl.addEventListener('change', () => send({ type: 'setMode', mode: modeEl.value }));
sessionsEl.addEventListener('focus', () => send({ type: 'refreshSessions' }));
sessionsEl.addEventListener('change', () => {
  if (sessionsEl.value) send({ type: 'switch', id: sessionsEl.value });
  else send({ type: 'newSession' });
});

send({ type: 'ready' });
