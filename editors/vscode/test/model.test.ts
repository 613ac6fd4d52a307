import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionModel, MAX_OUTPUT, utf16Offset, type ToolBlock, type AnswerBlock, type ThoughtsBlock, type SubagentBlock } from '../src/model';
import type { ZeroEvent } from '../src/protocol';

/** A builder of events with increasing seq. */
function stream(session = 's1') {
  let seq = 0;
  return (type: string, fields: Partial<ZeroEvent> = {}): ZeroEvent => ({ v: 1, seq: ++seq, session, agent: 0, type, time: '2025-01-01T00:00:00Z', ...fields });
}

/** A run: a message, reasoning, thoughts, a command with output that asks approval, then the answer. */
function run(ev = stream()): ZeroEvent[] {
  return [
    ev('run_started', { item: 'msg-1', text: 'list the files' }),
    ev('turn_started', { item: 'msg-2', iteration: 1 }),
    ev('reasoning_delta', { item: 'msg-2', text: 'Let me ' }),
    ev('reasoning_delta', { item: 'msg-2', text: 'think.' }),
    ev('thoughts_delta', { item: 'msg-2', text: 'I will run ' }),
    ev('thoughts_delta', { item: 'msg-2', text: 'ls' }),
    ev('headline', { item: 'msg-2', text: 'Listing files' }),
    ev('tool_call', { item: 'tool-1', tool: 'code_execution_tool', args: { runtime: 'terminal', code: 'ls' }, kind: 'execute', title: 'Listing files' }),
    ev('approval_requested', { item: 'tool-1', text: 'ap-1', tool: 'code_execution_tool', title: 'ls' }),
    ev('approval_resolved', { text: 'ap-1', status: 'approved' }),
    ev('tool_started', { item: 'tool-1', tool: 'code_execution_tool' }),
    ev('tool_output_delta', { item: 'tool-1', text: 'a.txt\n' }),
    ev('tool_output_delta', { item: 'tool-1', text: 'b.txt\n' }),
    ev('tool_result', { item: 'tool-1', tool: 'code_execution_tool', status: 'completed', text: 'a.txt\nb.txt' }),
    ev('usage', { item: 'msg-2', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }),
    ev('turn_started', { item: 'msg-3', iteration: 2 }),
    ev('thoughts_delta', { item: 'msg-3', text: 'Done.' }),
    ev('response_delta', { item: 'msg-3', text: 'There are ' }),
    ev('response_delta', { item: 'msg-3', text: '**two** files.' }),
    ev('tool_call', { item: 'tool-2', tool: 'response', args: { text: 'There are **two** files.' } }),
    ev('tool_started', { item: 'tool-2', tool: 'response' }),
    ev('tool_result', { item: 'tool-2', tool: 'response', status: 'completed', text: 'There are **two** files.' }),
    ev('response', { item: 'tool-2', text: 'There are **two** files.' }),
    ev('run_ended', { item: 'msg-1', stop_reason: 'response' }),
  ];
}

test('a whole run folds into user message, reasoning, thoughts, a tool card and the answer', () => {
  const m = new SessionModel();
  m.applyAll(run());
  const kinds = m.blocks.map((b) => b.kind);
  assert.deepEqual(kinds, ['user', 'reasoning', 'thoughts', 'tool', 'thoughts', 'answer', 'tool']);
  assert.equal(m.blocks[0]!.kind === 'user' && m.blocks[0]!.text, 'list the files');
  assert.equal(m.blocks[1]!.kind === 'reasoning' && m.blocks[1]!.text, 'Let me think.');
  const th = m.blocks[2] as ThoughtsBlock;
  assert.equal(th.text, 'I will run ls');
  assert.equal(th.headline, 'Listing files');
  const tool = m.get('tool-1') as ToolBlock;
  assert.equal(tool.status, 'completed');
  assert.equal(tool.output, 'a.txt\nb.txt\n');
  assert.equal(tool.result, 'a.txt\nb.txt');
  assert.deepEqual(tool.approval, { id: 'ap-1', status: 'approved' });
  assert.deepEqual(tool.args, { runtime: 'terminal', code: 'ls' });
  const answer = m.blocks[5] as AnswerBlock;
  assert.equal(answer.text, 'There are **two** files.');
  assert.equal(answer.final, true);
  assert.equal((m.get('tool-2') as ToolBlock).hidden, true, 'the response tool shows as the answer, not a card');
  const st = m.status();
  assert.equal(st.run, 'idle');
  assert.equal(st.runs, 1);
  assert.equal(st.lastStop, 'response');
  assert.equal(st.session, 's1');
  assert.equal(st.usage.total, 15);
  assert.equal(st.lastSeq, 24);
});

test('run state goes running, waiting for approval, running, idle', () => {
  const m = new SessionModel();
  const evs = run();
  const states: string[] = [];
  for (const e of evs) {
    m.apply(e);
    if (states[states.length - 1] !== m.runState) states.push(m.runState);
  }
  assert.deepEqual(states, ['running', 'waiting_approval', 'running', 'idle']);
});

test('pending approvals carry their ids and the tool card waits', () => {
  const m = new SessionModel();
  m.applyAll(run().slice(0, 9));
  assert.equal(m.runState, 'waiting_approval');
  assert.deepEqual(m.pendingApprovals.map((a) => [a.id, a.item, a.tool, a.title]), [['ap-1', 'tool-1', 'code_execution_tool', 'ls']]);
  assert.equal((m.get('tool-1') as ToolBlock).status, 'awaiting_approval');
});

test('a denied approval shows on the card with its reason', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll([
    ev('run_started', { item: 'm1', text: 'rm -rf /' }),
    ev('tool_call', { item: 't1', tool: 'code_execution_tool' }),
    ev('approval_requested', { item: 't1', text: 'ap', tool: 'code_execution_tool' }),
    ev('approval_resolved', { text: 'ap', status: 'denied', error: 'refused by the user' }),
    ev('tool_result', { item: 't1', tool: 'code_execution_tool', status: 'failed', text: 'refused by the user' }),
  ]);
  const t = m.get('t1') as ToolBlock;
  assert.deepEqual(t.approval, { id: 'ap', status: 'denied', reason: 'refused by the user' });
  assert.equal(t.status, 'failed');
  assert.equal(m.runState, 'running');
});

test('a replay over a live view changes nothing; a replay into a new view gives the same view', () => {
  const evs = run();
  const live = new SessionModel();
  live.applyAll(evs);
  const before = JSON.stringify(live.blocks);
  live.takeChanges();
  live.applyAll(evs); // zero/loadSession of a session already followed
  assert.equal(JSON.stringify(live.blocks), before);
  assert.equal(live.takeChanges().blocks.length, 0);

  // The server coalesces consecutive deltas on replay (server.Coalesce).
  const coalesced: ZeroEvent[] = [];
  for (const e of evs) {
    const last = coalesced[coalesced.length - 1];
    if (last && e.type.endsWith('_delta') && last.type === e.type && last.item === e.item && last.agent === e.agent) {
      coalesced[coalesced.length - 1] = { ...last, text: (last.text ?? '') + (e.text ?? ''), seq: e.seq };
    } else coalesced.push({ ...e });
  }
  const fresh = new SessionModel();
  fresh.applyAll(coalesced);
  const strip = (m: SessionModel) => JSON.stringify(m.blocks.map(({ rev: _r, seq: _s, ...b }) => b));
  assert.equal(strip(fresh), strip(live));
});

test('events of unknown items create what they need', () => {
  const ev = stream();
  const m = new SessionModel();
  // The view started listening in the middle of a run.
  m.applyAll([
    ev('tool_output_delta', { item: 'tx', text: 'partial output' }),
    ev('tool_result', { item: 'tx', tool: 'code_execution_tool', status: 'completed', text: 'ok' }),
    ev('approval_resolved', { text: 'never-seen', status: 'approved' }),
    ev('response', { item: 'ty', text: 'final' }),
    ev('subordinate_ended', { agent: 3, text: 'sub answer' }),
    ev('some_future_event', { item: 'zz' }),
    ev('thoughts_delta', { text: 'no item' }),
    ev('run_ended', { stop_reason: 'response' }),
  ]);
  const t = m.get('tx') as ToolBlock;
  assert.equal(t.output, 'partial output');
  assert.equal(t.tool, 'code_execution_tool');
  assert.equal(t.status, 'completed');
  assert.equal(m.blocks.filter((b) => b.kind === 'answer').length, 1);
  assert.equal(m.runState, 'idle');
});

test('subordinate agents nest by agent number', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll([
    ev('run_started', { item: 'm1', text: 'research' }),
    ev('tool_call', { item: 't1', tool: 'call_subordinate', args: { message: 'look it up' } }),
    ev('tool_started', { item: 't1', tool: 'call_subordinate' }),
    ev('subordinate_started', { agent: 1, profile: 'researcher', text: 'look it up' }),
    ev('thoughts_delta', { agent: 1, item: 'm2', text: 'searching' }),
    ev('tool_call', { agent: 1, item: 't2', tool: 'search_engine' }),
    ev('subordinate_started', { agent: 2, text: 'deeper' }),
    ev('thoughts_delta', { agent: 2, item: 'm3', text: 'deeper thoughts' }),
    ev('subordinate_ended', { agent: 2, text: 'deep answer' }),
    ev('tool_result', { agent: 1, item: 't2', tool: 'search_engine', status: 'completed', text: 'r' }),
    ev('subordinate_ended', { agent: 1, profile: 'researcher', text: 'found it' }),
    ev('tool_result', { item: 't1', tool: 'call_subordinate', status: 'completed', text: 'found it' }),
    ev('thoughts_delta', { item: 'm4', text: 'back at 0' }),
  ]);
  const subs = m.blocks.filter((b): b is SubagentBlock => b.kind === 'subagent');
  assert.equal(subs.length, 2);
  const [s1, s2] = subs as [SubagentBlock, SubagentBlock];
  assert.equal(s1.number, 1);
  assert.equal(s1.parent, undefined);
  assert.equal(s1.profile, 'researcher');
  assert.equal(s1.answer, 'found it');
  assert.equal(s1.ended, true);
  assert.equal(s2.parent, s1.id);
  assert.equal(s2.answer, 'deep answer');
  assert.equal(m.get('m2:thoughts')!.parent, s1.id);
  assert.equal(m.get('t2')!.parent, s1.id);
  assert.equal(m.get('m3:thoughts')!.parent, s2.id);
  assert.equal(m.get('m4:thoughts')!.parent, undefined);
  assert.equal(m.get('t1')!.parent, undefined);
});

test('warnings, errors, interventions and history_compressed are shown; a run error is not repeated', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll([
    ev('warning', { text: 'docker not found: local sandbox' }),
    ev('run_started', { item: 'm1', text: 'go' }),
    ev('intervention', { item: 'm2', text: 'also this' }),
    ev('history_compressed', { item: 'h1', text: 'compressed', tokens: { before: 9000, after: 3000 } }),
    ev('error', { item: 'm3', text: 'model: 500' }),
    ev('run_ended', { item: 'm1', stop_reason: 'error', error: 'model: 500' }),
    ev('run_started', { item: 'm4', text: 'again' }),
    ev('run_ended', { item: 'm4', stop_reason: 'error', error: 'interrupted' }),
    ev('run_started', { item: 'm5', text: 'more' }),
    ev('run_ended', { item: 'm5', stop_reason: 'cancelled' }),
  ]);
  const shown = m.blocks.map((b) => (b.kind === 'notice' ? `${b.level}:${b.text}` : b.kind === 'user' ? `user${b.intervention ? '+' : ''}:${b.text}` : b.kind));
  assert.deepEqual(shown, [
    'warning:docker not found: local sandbox',
    'user:go',
    'user+:also this',
    'info:compressed',
    'error:model: 500',
    'user:again',
    'error:interrupted',
    'user:more',
    'info:Cancelled.',
  ]);
  const h = m.blocks[3]!;
  assert.ok(h.kind === 'notice' && h.tokens?.after === 3000);
  assert.equal(m.status().runs, 3);
});

test('a run that ends leaves no approval pending and no tool running', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll([
    ev('run_started', { item: 'm1', text: 'go' }),
    ev('tool_call', { item: 't1', tool: 'code_execution_tool' }),
    ev('approval_requested', { item: 't1', text: 'ap', tool: 'code_execution_tool' }),
    ev('run_ended', { item: 'm1', stop_reason: 'error', error: 'interrupted' }),
  ]);
  assert.equal(m.runState, 'idle');
  assert.equal(m.pendingApprovals.length, 0);
  const t = m.get('t1') as ToolBlock;
  assert.equal(t.status, 'cancelled');
  assert.equal(t.approval?.status, 'cancelled');
});

test('diffs of a tool result are kept', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll([
    ev('tool_call', { item: 't1', tool: 'text_editor', method: 'write', args: { path: 'a.go' } }),
    ev('tool_result', { item: 't1', tool: 'text_editor', status: 'completed', text: 'written', diffs: [{ path: '/w/a.go', old_text: null, new_text: 'package a\n' }] }),
  ]);
  const t = m.get('t1') as ToolBlock;
  assert.equal(t.method, 'write');
  assert.deepEqual(t.diffs, [{ path: '/w/a.go', old_text: null, new_text: 'package a\n' }]);
});

test('tool output keeps its tail past MAX_OUTPUT', () => {
  const ev = stream();
  const m = new SessionModel();
  const chunk = 'x'.repeat(MAX_OUTPUT / 2);
  m.applyAll([ev('tool_output_delta', { item: 't', text: chunk }), ev('tool_output_delta', { item: 't', text: chunk }), ev('tool_output_delta', { item: 't', text: 'END' })]);
  const t = m.get('t') as ToolBlock;
  assert.equal(t.output.length, MAX_OUTPUT);
  assert.ok(t.output.endsWith('END'));
  assert.equal(t.truncated, true);
});

test('takeChanges returns only the blocks changed, in order, with the status', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll([ev('run_started', { item: 'm1', text: 'go' }), ev('thoughts_delta', { item: 'm2', text: 'a' })]);
  let c = m.takeChanges();
  assert.deepEqual(c.blocks.map((b) => b.id), ['m1:run', 'm2:thoughts']);
  assert.equal(c.status.run, 'running');
  m.apply(ev('thoughts_delta', { item: 'm2', text: 'b' }));
  c = m.takeChanges();
  assert.deepEqual(c.blocks.map((b) => [b.id, b.rev]), [['m2:thoughts', 3]]);
  assert.equal(m.dirty, false);
});

test('malformed events are ignored', () => {
  const m = new SessionModel();
  m.apply(null as unknown as ZeroEvent);
  m.apply({} as ZeroEvent);
  m.apply({ seq: 1, type: 'tool_result', session: 's', agent: -4, time: '' } as ZeroEvent);
  assert.equal(m.blocks.length, 1);
  assert.equal(m.blocks[0]!.agent, 0);
});

test('a command waiting for the sandbox image shows the pull on its card, then that it was pulled', () => {
  const ev = stream();
  const m = new SessionModel('s1');
  m.applyAll([
    ev('run_started', { item: 'msg-1', text: 'look' }),
    ev('tool_call', { item: 't1', tool: 'code_execution_tool', args: { code: 'ls' } }),
    ev('tool_started', { item: 't1', tool: 'code_execution_tool' }),
    ev('sandbox_pull', { item: 't1', status: 'pulling', text: 'pulling the sandbox image kali: 0 of 1 layers, 12.0 MB of 48.0 MB' }),
  ]);
  const t = m.get('t1') as ToolBlock;
  assert.equal(t.pull, 'pulling the sandbox image kali: 0 of 1 layers, 12.0 MB of 48.0 MB');
  assert.equal(t.status, 'running');
  m.applyAll([
    ev('sandbox_pull', { item: 't1', status: 'pulled', text: 'pulled the sandbox image kali (1 layers, 48.0 MB)' }),
    ev('tool_result', { item: 't1', tool: 'code_execution_tool', status: 'completed', text: 'a.txt' }),
  ]);
  assert.equal((m.get('t1') as ToolBlock).pull, 'pulled the sandbox image kali (1 layers, 48.0 MB)');
  // A pull that failed, or a command cancelled while it went, leaves no progress behind.
  m.applyAll([
    ev('tool_call', { item: 't2', tool: 'code_execution_tool', args: { code: 'ls' } }),
    ev('sandbox_pull', { item: 't2', status: 'pulling', text: 'pulling the sandbox image kali: 0 of 1 layers' }),
    ev('tool_result', { item: 't2', tool: 'code_execution_tool', status: 'cancelled', text: 'cancelled' }),
    ev('tool_call', { item: 't3', tool: 'code_execution_tool', args: { code: 'ls' } }),
    ev('sandbox_pull', { item: 't3', status: 'pulling', text: 'pulling the sandbox image kali: 0 of 1 layers' }),
    ev('sandbox_pull', { item: 't3', status: 'failed', text: 'pulling the sandbox image kali failed: offline' }),
  ]);
  assert.equal((m.get('t2') as ToolBlock).pull, undefined);
  assert.equal((m.get('t3') as ToolBlock).pull, undefined);
});

test('an interrupted command: the result keeps what follows the streamed output, in UTF-8 bytes, and says it still runs', () => {
  const ev = stream();
  const m = new SessionModel();
  const out = 'héllo ✓\n';
  const note = '[SYSTEM: The command is still running in session 0; wait for it, type into it or stop it.]';
  m.applyAll([
    ev('run_started', { item: 'm1', text: 'build it' }),
    ev('tool_call', { item: 't1', tool: 'code_execution_tool', args: { code: 'make' } }),
    ev('tool_started', { item: 't1', tool: 'code_execution_tool' }),
    ev('tool_output_delta', { item: 't1', text: 'hé' }),
    ev('tool_output_delta', { item: 't1', text: 'llo ✓\n' }),
    ev('intervention', { item: 'm2', text: 'also run the tests' }),
    ev('tool_result', {
      item: 't1',
      tool: 'code_execution_tool',
      status: 'completed',
      running: true,
      streamed: new TextEncoder().encode(out).length, // 11 bytes, 8 UTF-16 units
      text: out + note,
    }),
  ]);
  const t = m.get('t1') as ToolBlock;
  assert.equal(t.output, out);
  assert.equal(t.result, note); // not the output again
  assert.equal(t.status, 'completed');
  assert.equal(t.stillRunning, true);
  m.apply(ev('run_ended', { item: 'm1', stop_reason: 'response' }));
  assert.equal(t.status, 'completed'); // the call returned: not cancelled by the run's end
  // A later result of the same card that is not running clears it.
  m.apply(ev('tool_result', { item: 't1', tool: 'code_execution_tool', status: 'completed', text: 'done' }));
  assert.equal(t.stillRunning, undefined);
  assert.equal(t.result, 'done');
});

test('a result with streamed but no live output seen shows its whole text', () => {
  const ev = stream();
  const m = new SessionModel();
  m.apply(ev('tool_result', { item: 't1', tool: 'code_execution_tool', status: 'completed', running: true, streamed: 6, text: 'tick 1\n[note]' }));
  assert.equal((m.get('t1') as ToolBlock).result, 'tick 1\n[note]');
});

test('utf16Offset turns UTF-8 byte counts into string offsets', () => {
  const s = 'aé✓😀b';
  const bytes = (t: string) => new TextEncoder().encode(t).length;
  for (const prefix of ['', 'a', 'aé', 'aé✓', 'aé✓😀', s]) {
    assert.equal(utf16Offset(s, bytes(prefix)), prefix.length, prefix);
  }
  assert.equal(utf16Offset(s, 2), 'aé'.length); // inside é: past it
  assert.equal(utf16Offset(s, 100), s.length);
  assert.equal(utf16Offset(s, 0), 0);
});

test('the mode: as the session was made, then as mode_changed says', () => {
  const ev = stream();
  const m = new SessionModel('s1', 'plan');
  assert.equal(m.status().mode, 'plan');
  m.apply(ev('mode_changed', { text: 'default' }));
  assert.equal(m.status().mode, 'default');
  assert.equal(m.takeChanges().status.mode, 'default');
  assert.equal(new SessionModel('s2').currentMode, 'default');
});

test('plans: a checklist per agent, rewritten in place; a subordinate\'s under its card; the todo card goes', () => {
  const ev = stream();
  const m = new SessionModel('s1');
  m.applyAll([
    ev('run_started', { item: 'run-1', text: 'fix it' }),
    ev('tool_call', { item: 'tool-1', tool: 'todo', method: 'write', args: { items: [] } }),
    ev('tool_result', { item: 'tool-1', tool: 'todo', status: 'completed', text: 'The plan is now: …' }),
    ev('plan', { item: 'tool-1', plan: { items: [{ content: 'Read', status: 'in_progress' }, { content: 'Fix', status: 'pending', priority: 'high' }] } }),
    ev('subordinate_started', { agent: 1, text: 'count the files', profile: 'developer' }),
    ev('plan', { agent: 1, item: 'tool-2', plan: { items: [{ content: 'Count', status: 'completed' }] } }),
    ev('subordinate_ended', { agent: 1, text: '3 files' }),
    ev('plan', { item: 'tool-3', plan: { items: [{ content: 'Read', status: 'completed' }, { content: 'Fix', status: 'completed' }] } }),
  ]);
  const plans = m.blocks.filter((b) => b.kind === 'plan');
  assert.equal(plans.length, 2);
  const [mine, sub] = [plans[0]!, plans[1]!];
  assert.ok(mine.kind === 'plan' && mine.items.every((it) => it.status === 'completed') && mine.items.length === 2, 'agent 0\'s plan is rewritten in place');
  const card = m.blocks.find((b) => b.kind === 'subagent');
  assert.ok(sub.kind === 'plan' && sub.items[0]?.content === 'Count' && sub.parent === card?.id, 'the subordinate\'s plan is under its card');
  const todo = m.blocks.find((b) => b.id === 'tool-1');
  assert.ok(todo && todo.kind === 'tool' && todo.hidden, 'the todo:write card is hidden');
});

test('pictures: a run\'s and an intervention\'s message carry theirs; a tool result\'s go on its card', () => {
  const ev = stream();
  const sha = (c: string) => c.repeat(64);
  const m = new SessionModel();
  m.applyAll([
    ev('run_started', { item: 'run-1', text: 'what is this?', images: [{ mime: 'image/png', sha256: sha('a'), width: 8, height: 6, name: 'red.png' }] }),
    ev('intervention', { text: '', images: [{ mime: 'image/jpeg', sha256: sha('b') }] }),
    ev('tool_call', { item: 'tool-1', tool: 'vision_load', args: { path: 'shot.png' } }),
    ev('tool_result', { item: 'tool-1', tool: 'vision_load', status: 'completed', text: 'loaded shot.png', images: [{ mime: 'image/png', sha256: sha('c'), name: 'shot.png' }, { mime: 'image/png', sha256: 'not-a-hash' } as never] }),
    ev('run_ended', { item: 'run-1', stop_reason: 'response' }),
  ]);
  const [user, iv] = m.blocks;
  assert.ok(user?.kind === 'user' && iv?.kind === 'user');
  assert.deepEqual(user.images, [{ mime: 'image/png', sha256: sha('a'), width: 8, height: 6, name: 'red.png' }]);
  assert.equal(iv.intervention, true);
  assert.deepEqual(iv.images?.map((i) => i.sha256), [sha('b')]);
  const tool = m.get('tool-1') as ToolBlock;
  assert.deepEqual(tool.images?.map((i) => i.sha256), [sha('c')], 'a malformed reference is left out');
});

test('a message of pictures only still shows; one of neither text nor pictures does not', () => {
  const ev = stream();
  const m = new SessionModel();
  m.apply(ev('run_started', { item: 'run-1', text: '', images: [{ mime: 'image/png', sha256: 'f'.repeat(64) }] }));
  m.apply(ev('run_ended', { item: 'run-1', stop_reason: 'response' }));
  m.apply(ev('run_started', { item: 'run-2', text: '' }));
  const users = m.blocks.filter((b) => b.kind === 'user');
  assert.equal(users.length, 1);
  assert.equal(users[0]!.kind === 'user' && users[0]!.text, '');
  // A replay of the same events changes nothing; a card without pictures has none.
  const before = JSON.stringify(m.blocks);
  m.apply(ev('tool_result', { item: 'tool-9', tool: 'x', status: 'completed', text: 'ok' }));
  assert.equal((m.get('tool-9') as ToolBlock).images, undefined);
  assert.ok(JSON.stringify(m.blocks).startsWith(before.slice(0, -1)));
});
