// Drives the real `zero lsp` (../../bin/zero) with the scripted model
// (../../bin/fakellm playing scripts/demo.json, or a script of the test)
// over vscode-jsonrpc, as the extension does, and folds its zero/event
// notifications into the model; the session calls of the view (rename,
// close, delete) and showDocuments false are checked against it too.
// Skipped when the binaries are not built (go build -o bin/zero ./cmd/zero;
// go build -o bin/fakellm ./cmd/fakellm at the repository root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection, type ResponseError } from 'vscode-jsonrpc/node';
import { SessionModel, type NoticeBlock, type ToolBlock, type UserBlock } from '../src/model';
import { toParams } from '../src/attachments';
import { conflictOf } from '../src/rewind';
import {
  ErrorCodes,
  Methods,
  type CheckpointsResult,
  type ForkParams,
  type ForkResult,
  type ImageResult,
  type RewindReport,
  type UndoParams,
  type InitializationOptions,
  type LoadSessionResult,
  type NewSessionParams,
  type NewSessionResult,
  type PromptResult,
  type RenameSessionParams,
  type SessionParams,
  type SessionsResult,
  type SetModeParams,
  type ZeroEvent,
} from '../src/protocol';

const root = path.resolve(__dirname, '../../../..');
const zero = process.env.ZERO_BIN ?? path.join(root, 'bin', 'zero');
const fake = path.join(root, 'bin', 'fakellm');
const have = existsSync(zero) && existsSync(fake);

async function fakeServer(script: string): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(fake, ['-script', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n')[0];
      if (buf.includes('\n') && line) resolve(line.trim());
    });
    proc.on('exit', () => reject(new Error('fakellm exited')));
  });
  return { url, proc };
}

interface Zero {
  ws: string;
  conn: MessageConnection;
  /** The window/showDocument requests the server sent. */
  shown: unknown[];
  stderr: () => string;
  close: () => Promise<void>;
}

/**
 * Starts fakellm with the script and `zero lsp` in a temporary workspace,
 * with HOME and the XDG directories in a second temporary folder (the
 * session store is there; a workspace that is HOME is refused),
 * then initializes it as the extension does, with initializationOptions
 * options; approvals in events are allowed.
 */
async function startZero(script: string | object, approval: string, options: InitializationOptions, onEvent?: (e: ZeroEvent) => void): Promise<Zero> {
  const ws = mkdtempSync(path.join(tmpdir(), 'zero-ws-'));
  const home = mkdtempSync(path.join(tmpdir(), 'zero-home-'));
  writeFileSync(path.join(ws, 'README.md'), '# hello\n');
  // No memorizing after a run: its usage, logged when it ends, would come
  // in among the events these tests compare.
  mkdirSync(path.join(home, 'zero'), { recursive: true });
  writeFileSync(path.join(home, 'zero', 'config.yaml'), 'memory:\n  memorize: false\n');
  let scriptPath: string;
  if (typeof script === 'string') scriptPath = script;
  else {
    scriptPath = path.join(ws, 'script.json');
    writeFileSync(scriptPath, JSON.stringify(script));
  }
  const { url, proc: fk } = await fakeServer(scriptPath);
  const server = spawn(zero, ['lsp', '--sandbox', 'local', '--approval', approval, '--model', 'demo', '--base-url', url], {
    cwd: ws,
    env: { ...process.env, OPENAI_API_KEY: '', HOME: home, ZERO_STORE: path.join(home, 'zero.db'), XDG_DATA_HOME: home, XDG_CONFIG_HOME: home, XDG_STATE_HOME: home, XDG_CACHE_HOME: home },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const conn = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  const shown: unknown[] = [];
  conn.onRequest('window/showDocument', (p: unknown) => {
    shown.push(p);
    return { success: true };
  });
  const models = new Map<string, SessionModel>();
  conn.onNotification(Methods.event, (e: ZeroEvent) => {
    onEvent?.(e);
    let m = models.get(e.session);
    if (!m) models.set(e.session, (m = new SessionModel(e.session)));
    m.apply(e);
    if (e.type === 'approval_requested' && m.pendingApprovals.some((a) => a.id === e.text)) void conn.sendRequest(Methods.approve, { id: e.text, approve: true });
  });
  conn.listen();
  const close = async () => {
    try {
      await conn.sendRequest('shutdown');
      await conn.sendNotification('exit');
    } finally {
      conn.dispose();
      if (server.exitCode === null && server.signalCode === null) {
        // Gone before its home is removed: it writes its state as it ends.
        const gone = once(server, 'exit');
        server.kill();
        await gone;
      }
      fk.kill();
      rmSync(ws, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    }
  };
  try {
    const init = await conn.sendRequest<{ capabilities: { experimental: { zero: { methods: string[] } } } }>('initialize', {
      processId: process.pid,
      rootUri: pathToFileURL(ws).toString(),
      // As VS Code does: it can show documents.
      capabilities: { window: { showDocument: { support: true } } },
      initializationOptions: options,
    });
    for (const m of [Methods.prompt, Methods.closeSession, Methods.deleteSession, Methods.renameSession]) {
      assert.ok(init.capabilities.experimental.zero.methods.includes(m), `no ${m}`);
    }
    await conn.sendNotification('initialized', {});
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return { ws, conn, shown, stderr: () => stderr, close };
}

const skip = !have && process.env.ZERO_REQUIRE_NODE !== '1' && 'bin/zero or bin/fakellm not built';

test('the real zero lsp: a run with an approval, the session list and a replay', { skip, timeout: 60_000 }, async () => {
  const live = new SessionModel();
  const events: ZeroEvent[] = [];
  const z = await startZero(path.join(root, 'scripts', 'demo.json'), 'ask', { approvals: 'events', showDocuments: false }, (e) => {
    events.push(e);
    live.apply(e);
  });
  const { conn } = z;
  try {
    const { sessionId } = await conn.sendRequest<NewSessionResult>(Methods.newSession, {});
    const res = await conn.sendRequest<PromptResult>(Methods.prompt, { sessionId, message: 'What is in this folder?' });
    assert.equal(res.stopReason, 'response', `${res.error ?? ''}\n${z.stderr()}`);
    assert.equal(live.runState, 'idle');
    const kinds = new Set(live.blocks.map((b) => b.kind));
    for (const k of ['user', 'reasoning', 'thoughts', 'tool', 'answer']) assert.ok(kinds.has(k as never), `no ${k} block`);
    const tool = live.blocks.find((b): b is ToolBlock => b.kind === 'tool' && !b.hidden)!;
    assert.equal(tool.status, 'completed');
    assert.match(tool.output, /README\.md/);
    assert.equal(tool.approval?.status, 'approved');
    const answer = live.blocks.find((b) => b.kind === 'answer');
    assert.ok(answer && answer.kind === 'answer' && answer.final && answer.text === res.response);

    const list = await conn.sendRequest<SessionsResult>(Methods.sessions, {});
    assert.ok(list.sessions.some((s) => s.id === sessionId));

    // A replay on the same connection changes nothing in the live view.
    const before = JSON.stringify(live.blocks);
    const n = events.length;
    const loaded = await conn.sendRequest<LoadSessionResult>(Methods.loadSession, { sessionId });
    assert.ok(loaded.events > 0);
    assert.equal(JSON.stringify(live.blocks), before);
    // The replayed events alone rebuild the same view.
    const fresh = new SessionModel();
    fresh.applyAll(events.slice(n));
    const strip = (m: SessionModel) => JSON.stringify(m.blocks.map(({ rev: _r, seq: _s, ...b }) => b));
    assert.equal(strip(fresh), strip(live));

    // A title the person chose shows in the list.
    await conn.sendRequest<null>(Methods.renameSession, { sessionId, title: 'My folder tour' } satisfies RenameSessionParams);
    const renamed = await conn.sendRequest<SessionsResult>(Methods.sessions, {});
    assert.equal(renamed.sessions.find((s) => s.id === sessionId)?.title, 'My folder tour');
    await assert.rejects(conn.sendRequest(Methods.renameSession, { sessionId, title: '  ' }), (e: ResponseError<unknown>) => e.code === ErrorCodes.invalidParams);

    // Closed, it stays listed and loads again, with the whole replay.
    await conn.sendRequest<null>(Methods.closeSession, { sessionId } satisfies SessionParams);
    const closed = await conn.sendRequest<SessionsResult>(Methods.sessions, {});
    assert.ok(closed.sessions.some((s) => s.id === sessionId && !s.running));
    const m = events.length;
    const again = await conn.sendRequest<LoadSessionResult>(Methods.loadSession, { sessionId });
    assert.equal(again.sessionId, sessionId);
    assert.equal(again.events, loaded.events);
    const reloaded = new SessionModel();
    reloaded.applyAll(events.slice(m));
    assert.equal(strip(reloaded), strip(live));

    // Deleted, it is gone; deleting it again says why.
    await conn.sendRequest<null>(Methods.deleteSession, { sessionId } satisfies SessionParams);
    const after = await conn.sendRequest<SessionsResult>(Methods.sessions, {});
    assert.ok(!after.sessions.some((s) => s.id === sessionId));
    await assert.rejects(
      conn.sendRequest(Methods.deleteSession, { sessionId }),
      (e: ResponseError<unknown>) => e.code === ErrorCodes.invalidParams && /unknown session/.test(e.message),
    );
    await assert.rejects(conn.sendRequest(Methods.loadSession, { sessionId }));
  } finally {
    await z.close();
  }
});

/** A script whose run writes notes.txt with the text editor, then answers. */
const writeScript = {
  replies: [
    { match: 'write the notes', content: JSON.stringify({ thoughts: ['I write the file.'], headline: 'Writing', tool_name: 'text_editor:write', tool_args: { path: 'notes.txt', content: 'hello\n' } }) },
    { content: JSON.stringify({ thoughts: ['Done.'], headline: 'Answering', tool_name: 'response', tool_args: { text: 'notes.txt is written.' } }) },
  ],
};

for (const showDocuments of [undefined, false] as const) {
  test(`the real zero lsp: a run that writes a file, showDocuments ${String(showDocuments)}`, { skip, timeout: 60_000 }, async () => {
    const z = await startZero(writeScript, 'auto', { approvals: 'events', ...(showDocuments === undefined ? {} : { showDocuments }) });
    try {
      const { sessionId } = await z.conn.sendRequest<NewSessionResult>(Methods.newSession, {});
      const res = await z.conn.sendRequest<PromptResult>(Methods.prompt, { sessionId, message: 'Please write the notes.' });
      assert.equal(res.stopReason, 'response', `${res.error ?? ''}\n${z.stderr()}`);
      assert.equal(readFileSync(path.join(z.ws, 'notes.txt'), 'utf8'), 'hello\n');
      await z.conn.sendRequest<SessionsResult>(Methods.sessions, {}); // one more round trip for anything late
      if (showDocuments === false) assert.equal(z.shown.length, 0, `window/showDocument: ${JSON.stringify(z.shown)}`);
      else assert.ok(z.shown.length > 0, 'the server shows the file it wrote by default (the control of the test above)');
    } finally {
      await z.close();
    }
  });
}

/** A script whose model tries to write a file, then answers with its plan. */
const planScript = {
  replies: [
    { match: 'PLAN-IT', content: JSON.stringify({ thoughts: ['I write it.'], headline: 'Writing', tool_name: 'text_editor:write', tool_args: { path: 'plan.txt', content: 'x\n' } }) },
    { match: 'plan mode is on', content: JSON.stringify({ thoughts: ['Plan mode.'], headline: 'Planning', tool_name: 'response', tool_args: { text: '1. Write plan.txt.' } }) },
  ],
};

test('the real zero lsp: a session made in plan mode refuses a write; zero/setMode switches it back', { skip, timeout: 60_000 }, async () => {
  const z = await startZero(planScript, 'auto', { approvals: 'events', showDocuments: false });
  try {
    const params: NewSessionParams = { mode: 'plan' };
    const { sessionId } = await z.conn.sendRequest<NewSessionResult>(Methods.newSession, params);
    const live = new SessionModel(sessionId, 'plan');
    let changed!: () => void;
    const modeChanged = new Promise<void>((resolve) => (changed = resolve));
    z.conn.onNotification(Methods.event, (e: ZeroEvent) => {
      live.apply(e);
      if (e.type === 'mode_changed') changed();
    });
    const res = await z.conn.sendRequest<PromptResult>(Methods.prompt, { sessionId, message: 'PLAN-IT: write plan.txt' });
    assert.equal(res.response, '1. Write plan.txt.', `${res.error ?? ''}\n${z.stderr()}`);
    assert.ok(!existsSync(path.join(z.ws, 'plan.txt')), 'the file was written in plan mode');
    const list = await z.conn.sendRequest<SessionsResult>(Methods.sessions, {});
    assert.equal(list.sessions.find((s) => s.id === sessionId)?.mode, 'plan');
    await z.conn.sendRequest<null>(Methods.setMode, { sessionId, mode: 'default' } satisfies SetModeParams);
    await modeChanged; // every client following the session is told
    assert.equal(live.status().mode, 'default');
    await assert.rejects(z.conn.sendRequest(Methods.setMode, { sessionId, mode: 'yolo' }), (e: ResponseError<unknown>) => e.code === ErrorCodes.invalidParams);
  } finally {
    await z.close();
  }
});

/** A 2×2 PNG: red, green, blue and white pixels. */
const fourPixels = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAG0lEQVR4nGL6z8DA8J+BhZHh/38GBkAAAAD//x0vBATwkV0VAAAAAElFTkSuQmCC';

test('the real zero lsp: a picture goes with the message, the user block names it, zero/image gives it back; a bad one is refused', { skip, timeout: 60_000 }, async () => {
  const script = { replies: [{ match: 'PICTURE-IT', content: JSON.stringify({ thoughts: ['Four pixels.'], headline: 'Looking', tool_name: 'response', tool_args: { text: 'Red, green, blue, white.' } }) }] };
  const z = await startZero(script, 'auto', { approvals: 'events', showDocuments: false });
  try {
    const { sessionId } = await z.conn.sendRequest<NewSessionResult>(Methods.newSession, {});
    const live = new SessionModel(sessionId);
    z.conn.onNotification(Methods.event, (e: ZeroEvent) => live.apply(e));
    // Refused up front: nothing runs.
    await assert.rejects(
      z.conn.sendRequest(Methods.prompt, { sessionId, message: 'PICTURE-IT', attachments: toParams([{ name: 'notes.txt', mimeType: 'image/png', data: Buffer.from('hello').toString('base64'), size: 5 }]) }),
      (e: ResponseError<unknown>) => e.code === ErrorCodes.invalidParams && /attachments\[0\].*notes\.txt/.test(e.message),
    );
    assert.equal(live.blocks.length, 0);
    const res = await z.conn.sendRequest<PromptResult>(Methods.prompt, {
      sessionId,
      message: 'PICTURE-IT: what colours?',
      attachments: toParams([{ name: 'four.png', mimeType: 'image/png', data: fourPixels, size: 84 }]),
    });
    assert.equal(res.response, 'Red, green, blue, white.', `${res.error ?? ''}\n${z.stderr()}`);
    const user = live.blocks.find((b): b is UserBlock => b.kind === 'user');
    assert.equal(user?.images?.length, 1);
    const ref = user!.images![0]!;
    assert.deepEqual({ ...ref, sha256: undefined }, { mime: 'image/png', width: 2, height: 2, name: 'four.png', sha256: undefined });
    const im = await z.conn.sendRequest<ImageResult>(Methods.image, { sessionId, sha256: ref.sha256 });
    assert.deepEqual(im, { mimeType: 'image/png', data: fourPixels, width: 2, height: 2, name: 'four.png' });
    await assert.rejects(z.conn.sendRequest(Methods.image, { sessionId, sha256: '0'.repeat(64) }), (e: ResponseError<unknown>) => e.code === ErrorCodes.requestFailed);
  } finally {
    await z.close();
  }
});

/** A run that writes kept.txt with the text editor, then makes out/made.txt and deletes gone.txt with a command. */
const messScript = {
  replies: [
    { match: 'MAKE-THE-MESS', content: JSON.stringify({ thoughts: ['edit'], headline: 'Editing', tool_name: 'text_editor:write', tool_args: { path: 'kept.txt', content: 'changed by the agent\n' } }) },
    { match: 'changed by the agent', content: JSON.stringify({ thoughts: ['shell'], headline: 'Shell', tool_name: 'code_execution_tool', tool_args: { runtime: 'terminal', code: 'mkdir -p out && echo new > out/made.txt && rm gone.txt && echo done-shell' } }) },
    { match: 'done-shell', content: JSON.stringify({ thoughts: ['done'], headline: 'Done', tool_name: 'response', tool_args: { text: 'mess made' } }) },
    { match: 'IN-THE-FORK', content: JSON.stringify({ thoughts: ['fork'], headline: 'Fork', tool_name: 'response', tool_args: { text: 'fork answer' } }) },
  ],
};

test('the real zero lsp: undo meets the user\'s change, asks, keeps it; the view marks the run undone; a fork goes on alone', { skip, timeout: 60_000 }, async () => {
  const z = await startZero(messScript, 'auto', { approvals: 'events', showDocuments: false });
  try {
    writeFileSync(path.join(z.ws, 'kept.txt'), 'the user\'s text\n');
    writeFileSync(path.join(z.ws, 'gone.txt'), 'deleted by a command\n');
    const { sessionId } = await z.conn.sendRequest<NewSessionResult>(Methods.newSession, {});
    const live = new SessionModel(sessionId);
    z.conn.onNotification(Methods.event, (e: ZeroEvent) => live.apply(e));
    const res = await z.conn.sendRequest<PromptResult>(Methods.prompt, { sessionId, message: 'MAKE-THE-MESS' });
    assert.equal(res.response, 'mess made', `${res.error ?? ''}\n${z.stderr()}`);
    assert.ok(existsSync(path.join(z.ws, 'out', 'made.txt')) && !existsSync(path.join(z.ws, 'gone.txt')));
    const user = live.blocks.find((b): b is UserBlock => b.kind === 'user')!;
    assert.equal(user.checkpoint?.ref.run, 1);
    assert.equal(user.checkpoint?.newest, true);
    const { checkpoints } = await z.conn.sendRequest<CheckpointsResult>(Methods.checkpoints, { sessionId });
    assert.deepEqual(checkpoints.map((c) => [c.id, c.run, c.kind, c.title]), [[1, 1, 'run', 'MAKE-THE-MESS']]);

    // The user edits README.md after the run: a conflict, nothing changed.
    writeFileSync(path.join(z.ws, 'README.md'), '# mine\n');
    const err = await z.conn.sendRequest<RewindReport>(Methods.undo, { sessionId } satisfies UndoParams).then(
      () => assert.fail('undo over the user\'s change succeeded'),
      (e: unknown) => e,
    );
    assert.deepEqual(conflictOf(err, ErrorCodes.conflict), { conflicts: ['README.md'], to: 1 });
    assert.ok(existsSync(path.join(z.ws, 'out', 'made.txt')), 'a refused undo changed the files');
    // Asked, the user keeps it.
    const rep = await z.conn.sendRequest<RewindReport>(Methods.undo, { sessionId, conflicts: 'keep' } satisfies UndoParams);
    assert.deepEqual(rep.kept, ['README.md']);
    assert.equal(readFileSync(path.join(z.ws, 'kept.txt'), 'utf8'), 'the user\'s text\n');
    assert.equal(readFileSync(path.join(z.ws, 'gone.txt'), 'utf8'), 'deleted by a command\n');
    assert.equal(readFileSync(path.join(z.ws, 'README.md'), 'utf8'), '# mine\n');
    assert.ok(!existsSync(path.join(z.ws, 'out')));
    // The rewound event came before the answer: the view has it.
    const notice = live.blocks.find((b): b is NoticeBlock => b.kind === 'notice' && !!b.rewind);
    assert.deepEqual(notice?.rewind?.kept, ['README.md']);
    assert.equal(user.undone, true);
    assert.equal(user.checkpoint, undefined);

    await assert.rejects(z.conn.sendRequest(Methods.fork, { sessionId, atRun: 7 } satisfies ForkParams), (e: ResponseError<unknown>) => e.code === ErrorCodes.invalidParams && /atRun/.test(e.message));
    const again = await z.conn.sendRequest<PromptResult>(Methods.prompt, { sessionId, message: 'IN-THE-FORK first' });
    assert.equal(again.run, 2);
    const fork = await z.conn.sendRequest<ForkResult>(Methods.fork, { sessionId } satisfies ForkParams);
    assert.notEqual(fork.sessionId, sessionId);
    const forked = new SessionModel(fork.sessionId);
    z.conn.onNotification(Methods.event, (e: ZeroEvent) => (e.session === fork.sessionId ? forked.apply(e) : undefined));
    await z.conn.sendRequest<LoadSessionResult>(Methods.loadSession, { sessionId: fork.sessionId });
    const last = forked.blocks[forked.blocks.length - 1];
    assert.ok(last?.kind === 'notice' && last.fork?.from === sessionId, JSON.stringify(last));
    // The fork holds run 2 only: run 1 was undone before it.
    assert.deepEqual(forked.blocks.filter((b): b is UserBlock => b.kind === 'user' && !b.undone).map((b) => b.text), ['IN-THE-FORK first']);
  } finally {
    await z.close();
  }
});
