import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as fs from 'node:fs/promises';
import { resolveBinary, serverArgs, serverEnv, startFailure, userPath, type LaunchSettings } from '../src/launch';

const settings = (over: Partial<LaunchSettings> = {}): LaunchSettings => ({ path: '', model: '', baseUrl: '', profile: '', sandbox: '', approval: '', env: {}, ...over });

test('the binary: the setting, else the bundled one, else PATH, and why', () => {
  const ext = '/ext';
  assert.deepEqual(resolveBinary(' /opt/zero ', ext, 'linux', () => true), { path: '/opt/zero', source: 'setting', why: 'zero.path in your user settings' });
  assert.match(resolveBinary('/gone/zero', ext, 'linux', () => false).why, /does not exist on this machine/);
  const bundled = resolveBinary('', ext, 'linux', (p) => p === path.join(ext, 'bin', 'zero'));
  assert.deepEqual([bundled.path, bundled.source], [path.join(ext, 'bin', 'zero'), 'bundled']);
  assert.equal(resolveBinary('', ext, 'win32', (p) => p.endsWith('zero.exe')).path, path.join(ext, 'bin', 'zero.exe'));
  const onPath = resolveBinary('', ext, 'linux', () => false);
  assert.deepEqual([onPath.path, onPath.source], ['zero', 'PATH']);
  assert.match(onPath.why, /not set and no binary is bundled/);
});

test("zero.path: the user's value only, never a workspace's or a folder's", () => {
  assert.deepEqual(userPath({ globalValue: ' /home/me/zero ' }), { path: '/home/me/zero', ignored: [] });
  // A cloned repository's .vscode/settings.json names its own binary: ignored, and said.
  assert.deepEqual(userPath({ workspaceValue: './evil/zero' }), { path: '', ignored: ['the workspace settings'] });
  assert.deepEqual(userPath({ globalValue: '/home/me/zero', workspaceValue: '/repo/zero', workspaceFolderValue: '/repo/zero' }), {
    path: '/home/me/zero',
    ignored: ['the workspace settings', "a folder's settings"],
  });
  assert.deepEqual(userPath(undefined), { path: '', ignored: [] });
  assert.deepEqual(userPath({ globalValue: 42 }), { path: '', ignored: [] });
});

test('the setting is application-scoped: VS Code reads it from the user settings, never a workspace', async () => {
  const pkg = JSON.parse(await fs.readFile(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const p = pkg.contributes.configuration.properties['zero.path'];
  assert.equal(p.scope, 'application');
  assert.equal(p.ignoreSync, true);
});

test('flags from the settings, empty ones left out', () => {
  assert.deepEqual(serverArgs(settings()), ['lsp']);
  assert.deepEqual(serverArgs(settings({ model: 'gpt-4.1-mini', baseUrl: 'http://localhost:11434/v1', profile: 'developer', sandbox: 'docker', approval: 'ask' })), [
    'lsp', '--model', 'gpt-4.1-mini', '--base-url', 'http://localhost:11434/v1', '--profile', 'developer', '--sandbox', 'docker', '--approval', 'ask',
  ]);
});

test('the environment: zero.env without secrets, the key from SecretStorage', () => {
  const { env, ignored } = serverEnv({ PATH: '/bin', HOME: undefined }, settings({ env: { ZERO_LOG: 'debug', OPENAI_API_KEY: 'in-settings', N: 3 } }), 'sk-secret');
  assert.deepEqual(env, { PATH: '/bin', ZERO_LOG: 'debug', OPENAI_API_KEY: 'sk-secret' });
  assert.deepEqual(ignored, ['OPENAI_API_KEY', 'N']);
  assert.equal(serverEnv({ OPENAI_API_KEY: 'from-shell' }, settings(), undefined).env.OPENAI_API_KEY, 'from-shell');
});

test('a start failure says what to do', () => {
  const enoent = Object.assign(new Error('spawn zero ENOENT'), { code: 'ENOENT' });
  assert.match(startFailure('zero', enoent, ''), /not found on PATH.*zero\.path/);
  assert.match(startFailure('/x/zero', enoent, ''), /`\/x\/zero` was not found/);
  assert.match(startFailure('zero', new Error('closed'), 'zero lsp: no model: set ZERO_MODEL or --model'), /Set `zero\.model`/);
});
