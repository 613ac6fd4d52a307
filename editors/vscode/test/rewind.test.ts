import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionModel, type NoticeBlock, type UserBlock } from '../src/model';
import type { CheckpointRef, ZeroEvent } from '../src/protocol';
import {
  BUILTINS,
  KEEP_MINE,
  OVERWRITE,
  REWIND_BOTH,
  REWIND_CONVERSATION,
  REWIND_FILES,
  conflictOf,
  conflictQuestion,
  conflictsFor,
  describeCheckpoint,
  parseBuiltin,
  rewindParams,
  rewindQuestion,
} from '../src/rewind';

test('the composer\'s built-in commands', () => {
  assert.deepEqual(parseBuiltin('/undo'), { name: 'undo' });
  assert.deepEqual(parseBuiltin('  /undo  '), { name: 'undo' });
  assert.deepEqual(parseBuiltin('/rewind'), { name: 'rewind' });
  assert.deepEqual(parseBuiltin('/rewind 3'), { name: 'rewind', run: 3 });
  assert.deepEqual(parseBuiltin('/fork'), { name: 'fork' });
  assert.deepEqual(parseBuiltin('/fork 2'), { name: 'fork', run: 2 });
  assert.deepEqual(parseBuiltin('/compact'), { name: 'compact', focus: '' });
  assert.deepEqual(parseBuiltin('/compact keep the parser\nand the tests'), { name: 'compact', focus: 'keep the parser\nand the tests' });
  // Not built in: a message, a saved command, a longer name.
  assert.equal(parseBuiltin('undo the last change'), undefined);
  assert.equal(parseBuiltin('/review src'), undefined);
  assert.equal(parseBuiltin('/undoall'), undefined);
  // A wrong argument says how to write it.
  for (const bad of ['/rewind two', '/rewind 0', '/fork -1', '/undo 2']) {
    const r = parseBuiltin(bad);
    assert.ok(r && 'error' in r, bad);
  }
  assert.match((parseBuiltin('/rewind two') as { error: string }).error, /RUN is a run's number/);
  assert.deepEqual(BUILTINS.map((c) => c.name), ['undo', 'rewind', 'compact', 'fork']);
});

test('the rewind question: three answers when the files are covered, the conversation alone when not', () => {
  const run: CheckpointRef = { id: 4, run: 3, kind: 'run', title: 'fix the parser', files: 12, bytes: 2048 };
  const q = rewindQuestion(run);
  assert.match(q.message, /before run 3 \("fix the parser"\)/);
  assert.deepEqual(q.choices, [REWIND_BOTH, REWIND_CONVERSATION, REWIND_FILES]);
  assert.deepEqual(rewindParams('s', 4, REWIND_BOTH), { sessionId: 's', to: 4, files: true, conversation: true });
  assert.deepEqual(rewindParams('s', 4, REWIND_CONVERSATION), { sessionId: 's', to: 4, conversation: true });
  assert.deepEqual(rewindParams('s', 4, REWIND_FILES), { sessionId: 's', to: 4, files: true });
  assert.equal(rewindParams('s', 4, undefined), undefined);
  const noFiles = rewindQuestion({ ...run, error: 'no snapshot store: only the conversation is kept' });
  assert.deepEqual(noFiles.choices, [REWIND_CONVERSATION]);
  assert.match(noFiles.detail, /no snapshot store/);
  assert.deepEqual(rewindQuestion({ id: 5, run: 3, kind: 'compact' }).choices, [REWIND_CONVERSATION]);
  assert.equal(describeCheckpoint(run), 'Checkpoint · 12 files (2.0 KiB)');
  assert.equal(describeCheckpoint({ id: 1, run: 1, kind: 'run', files: 1, bytes: 5 }), 'Checkpoint · 1 file (5 bytes)');
  assert.equal(describeCheckpoint({ ...run, error: 'x' }), 'Checkpoint · the conversation only');
});

test('the conflict error: read from the error, asked with the files named, answered keep or overwrite', () => {
  const err = Object.assign(new Error('files changed outside the agent'), { code: -32010, data: { conflicts: ['kept.txt', 'mine.txt'], to: 1 } });
  const data = conflictOf(err, -32010);
  assert.deepEqual(data, { conflicts: ['kept.txt', 'mine.txt'], to: 1 });
  assert.equal(conflictOf(err, -32603), undefined);
  assert.equal(conflictOf(new Error('other'), -32010), undefined);
  assert.equal(conflictOf({ code: -32010, data: null }, -32010), undefined);
  const q = conflictQuestion(data!);
  assert.match(q.message, /2 files were changed outside Zero/);
  assert.match(q.detail, /kept\.txt\nmine\.txt/);
  assert.match(q.detail, /Nothing has been changed yet/);
  assert.deepEqual(q.choices, [KEEP_MINE, OVERWRITE]);
  assert.equal(conflictsFor(KEEP_MINE), 'keep');
  assert.equal(conflictsFor(OVERWRITE), 'overwrite');
  assert.equal(conflictsFor(undefined), undefined);
  const many = conflictQuestion({ conflicts: Array.from({ length: 20 }, (_, i) => `f${i}`), to: 2 });
  assert.match(many.detail, /… and 8 more/);
});

/** A builder of events with increasing seq. */
function stream(session = 's1') {
  let seq = 0;
  return (type: string, fields: Partial<ZeroEvent> = {}): ZeroEvent => ({ v: 1, seq: ++seq, session, agent: 0, type, time: '2025-01-01T00:00:00Z', ...fields });
}

/** A run with its checkpoint: the message, a tool card, the answer. */
function run(ev: ReturnType<typeof stream>, n: number, id = n): ZeroEvent[] {
  return [
    ev('checkpoint', { text: `checkpoint ${id} before run ${n}`, checkpoint: { id, run: n, kind: 'run', title: `task ${n}`, files: 3, bytes: 100 } }),
    ev('run_started', { item: `run-${n}`, text: `task ${n}` }),
    ev('tool_call', { item: `tool-${n}`, tool: 'text_editor', method: 'write', args: { path: 'a.txt' } }),
    ev('tool_result', { item: `tool-${n}`, tool: 'text_editor', status: 'completed', text: 'written' }),
    ev('response', { item: `tool-${n}r`, text: `answer ${n}` }),
    ev('run_ended', { item: `run-${n}`, stop_reason: 'response' }),
  ];
}

const users = (m: SessionModel) => m.blocks.filter((b): b is UserBlock => b.kind === 'user');

test('a checkpoint goes on its run\'s message; the newest one carries the undo', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll(run(ev, 1));
  let [u1] = users(m);
  assert.deepEqual(u1!.checkpoint, { ref: { id: 1, run: 1, kind: 'run', title: 'task 1', files: 3, bytes: 100 }, newest: true });
  assert.equal(m.status().checkpoint, 1);
  m.takeChanges();
  m.applyAll(run(ev, 2));
  const ch = m.takeChanges();
  [u1] = users(m);
  const u2 = users(m)[1]!;
  assert.equal(u1!.checkpoint?.newest, false);
  assert.equal(u2.checkpoint?.newest, true);
  assert.ok(ch.blocks.includes(u1!), 'the older message is redrawn without its undo');
  assert.equal(ch.status.checkpoint, 2);
  assert.deepEqual(m.liveCheckpoints().map((c) => c.id), [1, 2]);
  assert.equal(m.checkpoint(2)?.title, 'task 2');
});

test('a rewind of the conversation marks the runs it took back undone; the checkpoints since are gone and ids come back', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll([...run(ev, 1), ...run(ev, 2)]);
  const firstRunBlocks = m.blocks.length / 2;
  m.takeChanges();
  m.apply(
    ev('rewound', {
      text: 'rewound to checkpoint 2 (before run 2): 1 files restored, 0 removed; 4 messages left the conversation; still running in the sandbox, not undone: shell 0: 42 sleep 300',
      rewind: { to: 2, run: 2, kind: "run", files: true, conversation: true, restored: ['a.txt'], messages: 4, running: ['shell 0: 42 sleep 300'] },
    }),
  );
  const ch = m.takeChanges();
  const undone = m.blocks.filter((b) => b.undone);
  assert.ok(undone.length > 0);
  assert.ok(m.blocks.slice(0, firstRunBlocks).every((b) => !b.undone), 'run 1 is kept');
  assert.ok(m.blocks.slice(firstRunBlocks, -1).every((b) => b.undone), 'run 2 is undone');
  for (const b of undone) assert.ok(ch.blocks.includes(b), 'undone blocks are redrawn');
  const notice = m.blocks[m.blocks.length - 1] as NoticeBlock;
  assert.equal(notice.kind, 'notice');
  assert.equal(notice.undone, undefined);
  assert.deepEqual(notice.rewind?.running, ['shell 0: 42 sleep 300']);
  const [u1, u2] = users(m);
  assert.equal(u2!.checkpoint, undefined, 'the undone run no longer offers a rewind');
  assert.equal(u1!.checkpoint?.newest, true, 'run 1 is the newest again');
  assert.equal(m.status().checkpoint, 1);
  // The next run's checkpoint takes id 2 again.
  m.applyAll(run(ev, 3, 2));
  const u3 = users(m)[2]!;
  assert.deepEqual(u3.checkpoint?.ref.id, 2);
  assert.equal(u3.checkpoint?.newest, true);
  assert.equal(users(m)[0]!.checkpoint?.newest, false);
  assert.deepEqual(m.liveCheckpoints().map((c) => c.run), [1, 3]);
});

test('a rewind of the files alone keeps the conversation and the checkpoints', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll(run(ev, 1));
  m.apply(ev('rewound', { text: 'rewound to checkpoint 1 (before run 1): 1 files restored, 0 removed', rewind: { to: 1, run: 1, kind: "run", files: true, conversation: false, restored: ['a.txt'] } }));
  assert.ok(m.blocks.every((b) => !b.undone));
  assert.equal(users(m)[0]!.checkpoint?.newest, true);
});

test('a compaction\'s checkpoint goes on its notice; undoing it marks the notice undone', () => {
  const ev = stream();
  const m = new SessionModel();
  m.applyAll(run(ev, 1));
  m.apply(ev('history_compressed', { text: 'history compacted from 900 to 100 tokens', tokens: { before: 900, after: 100 } }));
  m.apply(ev('checkpoint', { text: 'checkpoint 2 before compacting', checkpoint: { id: 2, run: 1, kind: 'compact', title: '/compact' } }));
  const notice = m.blocks.find((b): b is NoticeBlock => b.kind === 'notice' && !!b.tokens)!;
  assert.equal(notice.checkpoint?.ref.kind, 'compact');
  assert.equal(notice.checkpoint?.newest, true);
  assert.equal(users(m)[0]!.checkpoint?.newest, false);
  m.apply(ev('rewound', { text: 'rewound to checkpoint 2', rewind: { to: 2, run: 1, kind: "run", files: true, conversation: true } }));
  assert.equal(notice.undone, true);
  assert.equal(users(m)[0]!.undone, undefined);
  assert.equal(users(m)[0]!.checkpoint?.newest, true);
});

test('a fork\'s replay: the copied runs, then the forked notice naming the original', () => {
  const ev = stream('fork');
  const m = new SessionModel();
  m.applyAll([...run(ev, 1), ev('forked', { text: 'forked from session orig after run 1', fork: { from: 'orig', run: 1 } })]);
  const last = m.blocks[m.blocks.length - 1] as NoticeBlock;
  assert.deepEqual(last.fork, { from: 'orig', run: 1 });
  assert.equal(users(m)[0]!.checkpoint?.newest, true);
});
