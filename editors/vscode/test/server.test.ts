// Drives the real `zero lsp` (../../bin/zero) with the scripted model
// (../../bin/fakellm playing scripts/demo.json) over vscode-jsonrpc, as the
// extension does, and folds its zero/event notifications into the model.
// Skipped when the binaries are not built (go build -o bin/zero ./cmd/zero;
// go build -o bin/fakellm ./cmd/fakellm at the repository root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { SessionModel, type ToolBlock } from '../src/model';
import { Methods, type NewSessionResult, type PromptResult, type SessionsResult, type ZeroEvent, type LoadSessionResult } from '../src/protocol';

const root = path.resolve(__dirname, '../../../..');
const zero = process.env.ZERO_BIN ?? path.join(root, 'bin', 'zero');
const fake = path.join(root, 'bin', 'fakellm');
const have = existsSync(zero) && existsSync(fake);

async function fakeServer(): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(fake, ['-script', path.join(root, 'scripts', 'demo.json')], { stdio: ['ignore', 'pipe', 'ignore'] });
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

test('the real zero lsp: a run with an approval, the session list and a replay', { skip: !have && process.env.ZERO_REQUIRE_NODE !== '1' && 'bin/zero or bin/fakellm not built', timeout: 60_000 }, async () => {
  const ws = mkdtempSync(path.join(tmpdir(), 'zero-ws-'));
  writeFileSync(path.join(ws, 'README.md'), '# hello\n');
  const { url, proc: fk } = await fakeServer();
  const server = spawn(zero, ['lsp', '--sandbox', 'local', '--approval', 'ask', '--model', 'demo', '--base-url', url], {
    cwd: ws,
    env: { ...process.env, OPENAI_API_KEY: '', ZERO_STORE: path.join(ws, 'zero.db'), XDG_DATA_HOME: ws, XDG_CONFIG_HOME: ws },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const conn = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  const live = new SessionModel();
  const events: ZeroEvent[] = [];
  conn.onNotification(Methods.event, (e: ZeroEvent) => {
    events.push(e);
    live.apply(e);
    if (e.type === 'approval_requested' && live.pendingApprovals.some((a) => a.id === e.text)) void conn.sendRequest(Methods.approve, { id: e.text, approve: true });
  });
  conn.listen();
  try {
    const init = await conn.sendRequest<{ capabilities: { experimental: { zero: { methods: string[] } } } }>('initialize', {
      processId: process.pid, rootUri: pathToFileURL(ws).toString(), capabilities: {}, initializationOptions: { approvals: 'events' },
    });
    assert.ok(init.capabilities.experimental.zero.methods.includes(Methods.prompt));
    await conn.sendNotification('initialized', {});
    const { sessionId } = await conn.sendRequest<NewSessionResult>(Methods.newSession, {});
    const res = await conn.sendRequest<PromptResult>(Methods.prompt, { sessionId, message: 'What is in this folder?' });
    assert.equal(res.stopReason, 'response', `${res.error ?? ''}\n${stderr}`);

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
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
  } finally {
    conn.dispose();
    server.kill();
    fk.kill();
    rmSync(ws, { recursive: true, force: true });
  }
});
