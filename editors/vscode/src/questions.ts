// A question an MCP server asks during a run (question_requested): the
// card the Zero view shows for it, the answer built from what the person
// filled in, and the "Log in" of a server that needs a login. No VS Code
// here: the card is built with the document it is given (the webview's,
// or a test's), so it is unit tested. The server's texts are untrusted:
// they go in with textContent only, never as HTML.

import type { QuestionBlock } from './model';
import type { AnswerAction, AnswerValue, Question, QuestionField } from './protocol';

/** What the person entered in one field: the text of a text or number box, a checkbox, the options ticked. */
export type RawValue = string | boolean | string[];
export type RawValues = Record<string, RawValue>;

/** The content of an accept, or what is wrong with the form, by field name. */
export type Built = { content: Record<string, AnswerValue> } | { errors: Record<string, string> };

/** What the person can do with a card. */
export interface QuestionHandlers {
  answer(action: AnswerAction, content?: Record<string, AnswerValue>): void;
  /** Open a URL question's page (the extension opens it, http and https only). */
  open(): void;
  /** The form changed: what it holds now (kept so a redraw does not lose it). */
  changed?(values: RawValues): void;
}

export interface QuestionCard {
  el: HTMLElement;
  /** Shows the server's refusal of an answer, and lets the person try again. */
  showError(message: string): void;
}

/** A field as the person reads it. */
export function fieldLabel(f: QuestionField): string {
  return f.title || f.name;
}

/** The value a field starts with: what the person entered before, else the asker's default. */
export function initialValue(f: QuestionField, draft?: RawValues): RawValue {
  const kept = draft?.[f.name];
  if (kept !== undefined) return kept;
  const d = f.default;
  switch (f.type) {
    case 'boolean':
      return d === true;
    case 'choices':
      return Array.isArray(d) ? d.filter((x) => typeof x === 'string') : [];
    case 'number':
    case 'integer':
      return typeof d === 'number' ? String(d) : '';
    default:
      return typeof d === 'string' ? d : '';
  }
}

const count = (s: string) => [...s].length;

function formatOK(format: string | undefined, s: string): boolean {
  switch (format) {
    case 'email':
      return /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s);
    case 'uri':
      return /^[a-z][a-z0-9+.-]*:\S*$/i.test(s);
    case 'date':
      return /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s));
    case 'date-time':
      return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(s) && !Number.isNaN(Date.parse(s));
  }
  return true;
}

const formatName: Record<string, string> = { email: 'an email address', uri: 'a URI', date: 'a date (YYYY-MM-DD)', 'date-time': 'a date and time (2025-01-31T09:30:00Z)' };

/**
 * The answer's content from what the form holds, each value of its field's
 * type; a field left empty is left out (the server then uses its default).
 * A light check of what the person can fix here (required, numbers,
 * bounds, formats); the server checks again.
 */
export function buildAnswer(q: Question, values: RawValues): Built {
  const content: Record<string, AnswerValue> = {};
  const errors: Record<string, string> = {};
  for (const f of q.fields ?? []) {
    const v = values[f.name];
    switch (f.type) {
      case 'boolean':
        content[f.name] = v === true;
        break;
      case 'choices': {
        const picked = Array.isArray(v) ? v.filter((x) => (f.options ?? []).some((o) => o.value === x)) : [];
        if (f.min_items !== undefined && picked.length < f.min_items) errors[f.name] = `Choose at least ${f.min_items}.`;
        else if (f.max_items !== undefined && picked.length > f.max_items) errors[f.name] = `Choose at most ${f.max_items}.`;
        else content[f.name] = picked;
        break;
      }
      case 'number':
      case 'integer': {
        const s = typeof v === 'string' ? v.trim() : '';
        if (s === '') {
          if (f.required && f.default === undefined) errors[f.name] = 'Required.';
          break;
        }
        const n = Number(s);
        if (!Number.isFinite(n)) errors[f.name] = 'Not a number.';
        else if (f.type === 'integer' && !Number.isInteger(n)) errors[f.name] = 'A whole number.';
        else if (f.min !== undefined && n < f.min) errors[f.name] = `At least ${f.min}.`;
        else if (f.max !== undefined && n > f.max) errors[f.name] = `At most ${f.max}.`;
        else content[f.name] = n;
        break;
      }
      default: {
        // string, choice, and types this view does not know: sent as text.
        const s = typeof v === 'string' ? v : '';
        if (s === '') {
          if (f.required && f.default === undefined) errors[f.name] = 'Required.';
          break;
        }
        if (f.type === 'choice' && !(f.options ?? []).some((o) => o.value === s)) errors[f.name] = 'Choose one of the options.';
        else if (f.min_length !== undefined && count(s) < f.min_length) errors[f.name] = `At least ${f.min_length} characters.`;
        else if (f.max_length !== undefined && count(s) > f.max_length) errors[f.name] = `At most ${f.max_length} characters.`;
        else if (f.format && !formatOK(f.format, s)) errors[f.name] = `Not ${formatName[f.format] ?? f.format}.`;
        else content[f.name] = s;
      }
    }
  }
  return Object.keys(errors).length > 0 ? { errors } : { content };
}

/** A URL question's page, when it is one the view may open: http or https, no credentials in it. */
export function pageURL(q: Pick<Question, 'url'>): string | undefined {
  if (typeof q.url !== 'string' || q.url === '') return undefined;
  let u: URL;
  try {
    u = new URL(q.url);
  } catch {
    return undefined;
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username !== '' || u.password !== '') return undefined;
  return u.toString();
}

/** A server's name fit for a notification (plain letters; nothing a renderer could take for markup). */
export function safeName(name: string): string {
  const s = name.replace(/[^A-Za-z0-9 _.-]/g, '').slice(0, 64);
  return s === '' ? 'an MCP server' : s;
}

/** The notification of a question the view cannot show now; the server's own text stays in the view. */
export function questionNotice(q: Pick<Question, 'server' | 'url'>): string {
  return `Zero: the MCP server "${safeName(q.server)}" ${q.url ? 'asks you to open a page' : 'asks you a question'}.`;
}

// ---- the card ----

let uid = 0;

/**
 * The card of a question: the server named, its message as plain text,
 * the form (or the page to open) and the buttons. doc is the webview's
 * document (a test's in the tests). draft is what the form held before a
 * redraw.
 */
export function renderQuestion(doc: Document, q: Question, h: QuestionHandlers, draft?: RawValues): QuestionCard {
  const el = <K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] => {
    const e = doc.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const card = el('div', 'card question');
  card.setAttribute('data-question', q.id);
  card.setAttribute('role', 'group');
  card.setAttribute('aria-label', `A question from the MCP server ${q.server}`);
  card.append(el('div', 'title', `The MCP server "${q.server}" asks`));
  card.append(el('div', 'pre', q.message));
  const error = el('div', 'notice error question-error');
  error.setAttribute('role', 'alert');
  error.hidden = true;

  const buttons: HTMLButtonElement[] = [];
  const busy = (on: boolean) => buttons.forEach((b) => (b.disabled = on));
  const button = (label: string, cls: string, onClick: () => void): HTMLButtonElement => {
    const b = el('button', cls, label);
    b.type = 'button';
    b.addEventListener('click', (ev) => {
      ev.stopPropagation();
      onClick();
    });
    buttons.push(b);
    return b;
  };
  const answer = (action: AnswerAction, content?: Record<string, AnswerValue>) => {
    error.hidden = true;
    busy(true);
    h.answer(action, content);
  };
  const row = el('div', 'approve');

  const page = q.url !== undefined && q.url !== '' ? q.url : undefined;
  if (page !== undefined) {
    const line = el('div', 'meta');
    line.append(el('span', undefined, 'The page: '), el('code', 'subject', page));
    card.append(line);
    if (pageURL(q) !== undefined) row.append(button('Open', 'primary', () => h.open()));
    else card.append(el('div', 'notice warning', 'This is not an http(s) address: Zero does not open it.'));
    row.append(button('Done', 'secondary', () => answer('accept')), button('Decline', 'secondary', () => answer('decline')));
    card.append(row, error);
    return { el: card, showError: (m) => showError(error, m, busy) };
  }

  const requiredMark = (): HTMLElement => {
    const m = el('span', 'required', ' *');
    m.title = 'Required';
    return m;
  };
  const values: RawValues = {};
  const fieldErrors = new Map<string, HTMLElement>();
  const form = el('form', 'question-form');
  form.addEventListener('submit', (ev) => ev.preventDefault());
  const set = (name: string, v: RawValue) => {
    values[name] = v;
    h.changed?.({ ...values });
  };
  const id = ++uid;
  for (const f of q.fields ?? []) {
    const wrap = el('div', 'question-field');
    const inputId = `q${id}-${f.name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    const label = (): HTMLLabelElement => {
      const l = el('label', 'label', fieldLabel(f));
      l.htmlFor = inputId;
      if (f.required) l.append(requiredMark());
      return l;
    };
    const init = initialValue(f, draft);
    values[f.name] = init;
    switch (f.type) {
      case 'boolean': {
        const box = el('input');
        box.type = 'checkbox';
        box.id = inputId;
        box.checked = init === true;
        box.addEventListener('change', () => set(f.name, box.checked));
        const l = el('label');
        l.htmlFor = inputId;
        l.append(box, el('span', undefined, ` ${fieldLabel(f)}`));
        if (f.required) l.append(requiredMark());
        wrap.append(l);
        break;
      }
      case 'choice': {
        const sel = el('select');
        sel.id = inputId;
        if (!f.required || f.default === undefined) {
          const none = el('option', undefined, f.required ? 'Choose…' : '(none)');
          none.value = '';
          sel.append(none);
        }
        for (const o of f.options ?? []) {
          const opt = el('option', undefined, o.title || o.value);
          opt.value = o.value;
          sel.append(opt);
        }
        sel.value = typeof init === 'string' ? init : '';
        sel.required = !!f.required;
        sel.addEventListener('change', () => set(f.name, sel.value));
        wrap.append(label(), sel);
        break;
      }
      case 'choices': {
        const box = el('fieldset', 'choices');
        const legend = el('legend', 'label', fieldLabel(f));
        if (f.required) legend.append(requiredMark());
        box.append(legend);
        const picked = new Set(Array.isArray(init) ? init : []);
        for (const o of f.options ?? []) {
          const cb = el('input');
          cb.type = 'checkbox';
          cb.value = o.value;
          cb.checked = picked.has(o.value);
          cb.addEventListener('change', () => {
            if (cb.checked) picked.add(o.value);
            else picked.delete(o.value);
            set(f.name, (f.options ?? []).map((x) => x.value).filter((v) => picked.has(v)));
          });
          const l = el('label');
          l.append(cb, el('span', undefined, ` ${o.title || o.value}`));
          box.append(l);
        }
        wrap.append(box);
        break;
      }
      default: {
        const input = el('input');
        input.id = inputId;
        if (f.type === 'number' || f.type === 'integer') {
          input.type = 'number';
          input.step = f.type === 'integer' ? '1' : 'any';
          if (f.min !== undefined) input.min = String(f.min);
          if (f.max !== undefined) input.max = String(f.max);
        } else {
          input.type = f.format === 'email' ? 'email' : f.format === 'uri' ? 'url' : f.format === 'date' ? 'date' : 'text';
          if (f.min_length !== undefined) input.minLength = f.min_length;
          if (f.max_length !== undefined) input.maxLength = f.max_length;
          if (f.format === 'date-time') input.placeholder = '2025-01-31T09:30:00Z';
        }
        input.required = !!f.required && f.default === undefined;
        input.value = typeof init === 'string' ? init : '';
        input.addEventListener('input', () => set(f.name, input.value));
        wrap.append(label(), input);
      }
    }
    if (f.description) wrap.append(el('div', 'meta', f.description));
    const fe = el('div', 'notice error question-field-error');
    fe.setAttribute('role', 'alert');
    fe.hidden = true;
    fieldErrors.set(f.name, fe);
    wrap.append(fe);
    form.append(wrap);
  }
  card.append(form);
  row.append(
    button('Submit', 'primary', () => {
      const built = buildAnswer(q, values);
      for (const [name, fe] of fieldErrors) {
        const msg = 'errors' in built ? built.errors[name] : undefined;
        fe.textContent = msg ?? '';
        fe.hidden = msg === undefined;
      }
      if ('content' in built) answer('accept', built.content);
    }),
    button('Decline', 'secondary', () => answer('decline')),
    button('Cancel', 'secondary', () => answer('cancel')),
  );
  card.append(row, error);
  return { el: card, showError: (m) => showError(error, m, busy) };
}

/** The card of a question block, or null once it was answered or abandoned (the card goes). */
export function questionCard(doc: Document, b: QuestionBlock, h: QuestionHandlers, draft?: RawValues): QuestionCard | null {
  return b.resolved !== undefined ? null : renderQuestion(doc, b.question, h, draft);
}

function showError(error: HTMLElement, message: string, busy: (on: boolean) => void): void {
  error.textContent = message;
  error.hidden = false;
  busy(false);
}

// ---- logging in to a server ----

/** A server's name as `zero mcp login` takes it: letters, digits, _ and -, not starting with - (it would read as a flag). */
const SERVER_NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;

/**
 * The server a warning tells the person to log in to ("… run `zero mcp
 * login NAME` …"), when the name is one the view may pass on; else
 * undefined.
 */
export function loginName(text: string): string | undefined {
  const m = /run `zero mcp login ([^`]*)`/.exec(text);
  const name = m?.[1];
  return name !== undefined && SERVER_NAME.test(name) ? name : undefined;
}

/**
 * How a terminal runs the login: the binary itself with the name as an
 * argument (VS Code starts shellPath with shellArgs, no shell reads them);
 * undefined for a name that is not a server's.
 */
export function loginCommand(binary: string, name: string): { shellPath: string; shellArgs: string[] } | undefined {
  if (!SERVER_NAME.test(name) || binary.trim() === '') return undefined;
  return { shellPath: binary, shellArgs: ['mcp', 'login', name] };
}
