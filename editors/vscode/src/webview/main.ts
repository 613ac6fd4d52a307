// The Zero view's script (runs in the webview). It draws the blocks the
// extension's SessionModel sends, redrawing only blocks whose rev changed,
// and sends the user's actions back. Text goes in with textContent; only
// the Markdown renderer (which escapes any HTML of the source) uses
// innerHTML.

import type { Block, Status, ToolBlock } from '../model';
import type { Command, Mode, SessionInfo } from '../protocol';
import { renderMarkdown } from '../markdown';
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

function draw(b: Block): HTMLElement | null {
  switch (b.kind) {
    case 'user': {
      const d = el('div', `msg user${b.intervention ? ' intervention' : ''}`);
      if (b.intervention) d.append(el('div', 'label', 'Sent during the run'));
      d.append(el('div', 'text', b.text));
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
      const d = el('div', `notice ${b.level}`, b.text);
      if (b.tokens) d.append(el('span', 'dim', ` (${b.tokens.before} → ${b.tokens.after} tokens)`));
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
  const wrap = el('div', 'block');
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
  stateEl.textContent = run === 'running' ? 'Running… a message now is an intervention' : run === 'waiting_approval' ? 'Waiting for your approval' : '';
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
      commands = m.commands;
      drawSlash();
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
  if (text.trim() === '') return;
  input.value = '';
  slash.hidden = true;
  send({ type: 'send', text });
}

// The / menu: the saved commands (.zero/commands, .claude/commands, the
// user's), asked for each time a message starts with "/", filtered as the
// name is typed; Up/Down choose, Enter or Tab takes one, Escape closes it.
let commands: Command[] = [];
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
