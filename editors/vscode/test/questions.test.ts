import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionModel, type QuestionBlock } from '../src/model';
import type { AnswerAction, AnswerValue, Question, ZeroEvent } from '../src/protocol';
import {
  buildAnswer,
  loginCommand,
  loginName,
  pageURL,
  questionCard,
  questionNotice,
  renderQuestion,
  type QuestionHandlers,
} from '../src/questions';

// A document just big enough for the card: elements with children, text,
// attributes, properties and listeners. Setting innerHTML throws: the card
// must never parse text as HTML.
type Child = FakeEl | string;
class FakeEl {
  children: Child[] = [];
  attrs = new Map<string, string>();
  listeners = new Map<string, ((ev: unknown) => void)[]>();
  className = '';
  hidden = false;
  type = '';
  value = '';
  checked = false;
  disabled = false;
  required = false;
  id = '';
  htmlFor = '';
  step = '';
  min = '';
  max = '';
  minLength = -1;
  maxLength = -1;
  placeholder = '';
  title = '';
  constructor(readonly tagName: string) {}
  get textContent(): string {
    return this.children.map((c) => (typeof c === 'string' ? c : c.textContent)).join('');
  }
  set textContent(v: string) {
    this.children = [v];
  }
  set innerHTML(_: string) {
    throw new Error('innerHTML was set');
  }
  setAttribute(n: string, v: string): void {
    this.attrs.set(n, String(v));
  }
  getAttribute(n: string): string | null {
    return this.attrs.get(n) ?? null;
  }
  append(...nodes: Child[]): void {
    this.children.push(...nodes);
  }
  addEventListener(type: string, fn: (ev: unknown) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  fire(type: string): void {
    for (const fn of this.listeners.get(type) ?? []) fn({ stopPropagation() {}, preventDefault() {} });
  }
  /** Every element below, depth first. */
  all(): FakeEl[] {
    return this.children.flatMap((c) => (typeof c === 'string' ? [] : [c, ...c.all()]));
  }
  find(pred: (e: FakeEl) => boolean): FakeEl {
    const e = this.all().find(pred);
    assert.ok(e, 'no such element');
    return e;
  }
  button(label: string): FakeEl {
    return this.find((e) => e.tagName === 'button' && e.textContent === label);
  }
}
const doc = { createElement: (tag: string) => new FakeEl(tag) } as unknown as Document;

interface Answered {
  action: AnswerAction;
  content?: Record<string, AnswerValue>;
}
function handlers(): QuestionHandlers & { answers: Answered[]; opened: number } {
  const h = {
    answers: [] as Answered[],
    opened: 0,
    answer(action: AnswerAction, content?: Record<string, AnswerValue>) {
      h.answers.push(content ? { action, content } : { action });
    },
    open() {
      h.opened++;
    },
  };
  return h;
}

const booking: Question = {
  id: 'q1',
  server: 'bookings',
  message: 'Which name is the booking under?',
  fields: [
    { name: 'name', title: 'Name', type: 'string', required: true },
    { name: 'seats', title: 'Seats', type: 'integer', default: 2, min: 1, max: 12 },
    { name: 'window', title: 'By the window', type: 'boolean' },
    { name: 'size', type: 'choice', default: 'm', options: [{ value: 's', title: 'Small' }, { value: 'm', title: 'Medium' }] },
    { name: 'tags', type: 'choices', default: ['a'], options: [{ value: 'a' }, { value: 'b', title: 'Bee' }] },
    { name: 'mail', type: 'string', format: 'email', description: 'For the confirmation' },
  ],
};

const input = (card: FakeEl, id: string) => card.find((e) => e.tagName === 'input' && e.id.endsWith(`-${id}`));

test('the card renders the form of a question: its fields, bounds, defaults and required marks', () => {
  const card = renderQuestion(doc, booking, handlers()).el as unknown as FakeEl;
  assert.match(card.textContent, /The MCP server "bookings" asks/);
  assert.match(card.textContent, /Which name is the booking under\?/);
  const name = input(card, 'name');
  assert.equal(name.type, 'text');
  assert.equal(name.required, true);
  assert.equal(name.value, '');
  const seats = input(card, 'seats');
  assert.deepEqual([seats.type, seats.min, seats.max, seats.step, seats.value], ['number', '1', '12', '1', '2']);
  const window = input(card, 'window');
  assert.deepEqual([window.type, window.checked], ['checkbox', false]);
  const size = card.find((e) => e.tagName === 'select');
  assert.equal(size.value, 'm');
  assert.deepEqual(
    size.all().filter((e) => e.tagName === 'option').map((o) => [o.value, o.textContent]),
    [['', '(none)'], ['s', 'Small'], ['m', 'Medium']],
  );
  const tags = card.all().filter((e) => e.tagName === 'input' && e.type === 'checkbox' && e.value !== '');
  assert.deepEqual(tags.map((t) => [t.value, t.checked]), [['a', true], ['b', false]]);
  assert.equal(input(card, 'mail').type, 'email');
  assert.match(card.textContent, /For the confirmation/);
  // Name is required: marked so.
  const marks = card.all().filter((e) => e.className === 'required');
  assert.equal(marks.length, 1);
  for (const b of ['Submit', 'Decline', 'Cancel']) card.button(b);
});

test('a hostile server\'s message and name are shown as text, never as HTML', () => {
  const hostile: Question = {
    id: 'q2',
    server: '"><img src=x onerror=alert(1)>',
    message: '<script>alert(1)</script><img src=x onerror=alert(2)> [Approve](command:workbench.action.terminal.sendSequence)',
    fields: [{ name: '<b>x</b>', title: '<i>title</i>', description: '<a href="javascript:alert(3)">d</a>', type: 'string' }],
  };
  const card = renderQuestion(doc, hostile, handlers()).el as unknown as FakeEl; // innerHTML would throw
  const tags = new Set(card.all().map((e) => e.tagName));
  for (const bad of ['script', 'img', 'b', 'i', 'a']) assert.ok(!tags.has(bad), `a <${bad}> element was made`);
  assert.ok(card.all().some((e) => e.children.length === 1 && e.children[0] === hostile.message), 'the message is one text node');
  assert.match(card.textContent, /<i>title<\/i>/);
});

test('Submit sends the answer with typed values; a value out of bounds is refused here', () => {
  const h = handlers();
  const card = renderQuestion(doc, booking, h).el as unknown as FakeEl;
  card.button('Submit').fire('click');
  assert.equal(h.answers.length, 0, 'the required name is empty');
  assert.match(card.textContent, /Required\./);

  const name = input(card, 'name');
  name.value = 'Ada';
  name.fire('input');
  const seats = input(card, 'seats');
  seats.value = '20';
  seats.fire('input');
  card.button('Submit').fire('click');
  assert.equal(h.answers.length, 0);
  assert.match(card.textContent, /At most 12\./);

  seats.value = '3';
  seats.fire('input');
  const window = input(card, 'window');
  window.checked = true;
  window.fire('change');
  const bee = card.find((e) => e.tagName === 'input' && e.value === 'b');
  bee.checked = true;
  bee.fire('change');
  card.button('Submit').fire('click');
  assert.deepEqual(h.answers, [{ action: 'accept', content: { name: 'Ada', seats: 3, window: true, size: 'm', tags: ['a', 'b'] } }]);
  assert.equal(typeof h.answers[0]!.content!.seats, 'number');
  // Busy until the server answers; a refusal is shown and the buttons work again.
  assert.equal(card.button('Submit').disabled, true);
});

test('Decline and Cancel answer without content; a refusal is shown and the card takes another answer', () => {
  const h = handlers();
  const qc = renderQuestion(doc, booking, h);
  const card = qc.el as unknown as FakeEl;
  card.button('Decline').fire('click');
  assert.equal(card.button('Cancel').disabled, true);
  qc.showError('zero/answer: no question "q1" is waiting');
  assert.match(card.textContent, /no question "q1" is waiting/);
  assert.equal(card.button('Cancel').disabled, false);
  card.button('Cancel').fire('click');
  assert.deepEqual(h.answers, [{ action: 'decline' }, { action: 'cancel' }]);
});

test('a draft survives a redraw', () => {
  let kept: Record<string, unknown> = {};
  const h = { ...handlers(), changed: (v: Record<string, unknown>) => (kept = v) };
  const card = renderQuestion(doc, booking, h).el as unknown as FakeEl;
  const name = input(card, 'name');
  name.value = 'Grace';
  name.fire('input');
  const again = renderQuestion(doc, booking, handlers(), kept as never).el as unknown as FakeEl;
  assert.equal(input(again, 'name').value, 'Grace');
  assert.equal(input(again, 'seats').value, '2');
});

test('buildAnswer types and checks each kind of field', () => {
  const q: Question = {
    id: 'q',
    server: 's',
    message: 'm',
    fields: [
      { name: 'n', type: 'number', min: 0.5 },
      { name: 'i', type: 'integer', required: true },
      { name: 's', type: 'string', min_length: 2, max_length: 3 },
      { name: 'd', type: 'string', format: 'date' },
      { name: 'c', type: 'choice', options: [{ value: 'x' }] },
      { name: 'cs', type: 'choices', min_items: 1, options: [{ value: 'x' }, { value: 'y' }] },
      { name: 'b', type: 'boolean' },
    ],
  };
  assert.deepEqual(buildAnswer(q, { n: '1.5', i: '4', s: 'ab', d: '2025-01-31', c: 'x', cs: ['y', 'z'], b: false }), {
    content: { n: 1.5, i: 4, s: 'ab', d: '2025-01-31', c: 'x', cs: ['y'], b: false },
  });
  // Left empty: left out (the server uses its default); booleans are always sent.
  assert.deepEqual(buildAnswer(q, { i: '1', cs: ['x'] }), { content: { i: 1, cs: ['x'], b: false } });
  const bad = buildAnswer(q, { n: 'abc', i: '1.5', s: 'abcd', d: '31/01/2025', c: 'evil', cs: [] });
  assert.ok('errors' in bad);
  assert.deepEqual(Object.keys(bad.errors).sort(), ['c', 'cs', 'd', 'i', 'n', 's']);
  assert.deepEqual(buildAnswer(q, { i: '', cs: ['x'] }), { errors: { i: 'Required.' } });
});

test('a page to open: its address shown, Open for http(s) only, Done accepts', () => {
  const h = handlers();
  const q: Question = { id: 'q3', server: 'acct', message: 'Connect your account', url: 'https://example.com/connect?x=1' };
  const card = renderQuestion(doc, q, h).el as unknown as FakeEl;
  assert.match(card.textContent, /https:\/\/example\.com\/connect\?x=1/);
  card.button('Open').fire('click');
  card.button('Done').fire('click');
  assert.equal(h.opened, 1);
  assert.deepEqual(h.answers, [{ action: 'accept' }]);
  for (const url of ['javascript:alert(1)', 'file:///etc/passwd', 'command:workbench.action.openSettings', 'https://u:p@example.com/']) {
    const c = renderQuestion(doc, { ...q, url }, handlers()).el as unknown as FakeEl;
    assert.ok(!c.all().some((e) => e.tagName === 'button' && e.textContent === 'Open'), url);
    assert.equal(pageURL({ url }), undefined, url);
  }
  assert.equal(pageURL({ url: 'http://127.0.0.1:8080/cb' }), 'http://127.0.0.1:8080/cb');
});

/** A builder of events with increasing seq. */
function stream(session = 's1') {
  let seq = 0;
  return (type: string, fields: Partial<ZeroEvent> = {}): ZeroEvent => ({ v: 1, seq: ++seq, session, agent: 0, type, time: '2025-01-01T00:00:00Z', ...fields });
}

test('the model keeps a question until question_resolved, and its card goes then', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll([ev('run_started', { item: 'run-1', text: 'book' }), ev('tool_call', { item: 't1', tool: 'bookings.book' })]);
  m.apply(ev('question_requested', { text: 'q1', title: 'bookings', question: booking }));
  assert.equal(m.runState, 'waiting_answer');
  assert.deepEqual(m.pendingQuestions.map((q) => q.id), ['q1']);
  const b = m.blocks.find((x) => x.kind === 'question') as QuestionBlock;
  assert.equal(b.question.server, 'bookings');
  assert.ok(questionCard(doc, b, handlers()));
  m.takeChanges();

  m.apply(ev('question_resolved', { text: 'q1', title: 'bookings', status: 'accept' }));
  assert.equal(b.resolved, 'accept');
  assert.equal(questionCard(doc, b, handlers()), null);
  assert.deepEqual(m.pendingQuestions, []);
  assert.equal(m.question('q1'), undefined);
  assert.equal(m.runState, 'running');
  assert.ok(m.takeChanges().blocks.includes(b), 'the view redraws the block (without its card)');

  // A question still waiting when the run ends goes too.
  m.apply(ev('question_requested', { text: 'q2', question: { ...booking, id: 'q2' } }));
  m.apply(ev('run_ended', { stop_reason: 'cancelled' }));
  const b2 = m.blocks.find((x) => x.kind === 'question' && x.question.id === 'q2') as QuestionBlock;
  assert.equal(b2.resolved, 'cancel');
  assert.equal(m.runState, 'idle');
  // A malformed question is ignored.
  m.apply(ev('question_requested', { text: 'q3', question: 'nope' as unknown as Question }));
  assert.equal(m.blocks.filter((x) => x.kind === 'question').length, 2);
});

test('a notification of a question names the server only, made plain', () => {
  assert.equal(questionNotice({ server: 'bookings' }), 'Zero: the MCP server "bookings" asks you a question.');
  assert.equal(questionNotice({ server: '[x](command:evil)', url: 'https://e.com' }), 'Zero: the MCP server "xcommandevil" asks you to open a page.');
});

test('the Log in button: the server named by a login warning, run as an argument, hostile names refused', () => {
  const warning = 'MCP server "github": it needs a login: run `zero mcp login github` and try again';
  assert.equal(loginName(warning), 'github');
  assert.equal(loginName('run `zero mcp login my_server-2`'), 'my_server-2');
  assert.deepEqual(loginCommand('/opt/zero/bin/zero', 'github'), { shellPath: '/opt/zero/bin/zero', shellArgs: ['mcp', 'login', 'github'] });
  for (const bad of ['x; rm -rf ~', '$(id)', 'a b', '`id`', '--help', '-x', 'name\nrm', 'ünï', '', 'a'.repeat(65), '../x', 'a&b', 'a|b']) {
    assert.equal(loginName(`run \`zero mcp login ${bad}\``), undefined, bad);
    assert.equal(loginCommand('/opt/zero/bin/zero', bad), undefined, bad);
  }
  assert.equal(loginName('a warning with no login in it'), undefined);
  assert.equal(loginCommand('', 'github'), undefined);
});
