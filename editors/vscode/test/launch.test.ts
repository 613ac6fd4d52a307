import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { resolveBinary, serverArgs, serverEnv, startFailure, type LaunchSettings } from '../src/launch';

const settings = (over: Partial<LaunchSettings> = {}): LaunchSettings => ({ path: '', model: '', baseUrl: '', profile: '', sandbox: '', approval: '', env: {}, ...over });

test('the binary: the setting, else the bundled one, else PATH', () => {
  const ext = '/ext';
  assert.equal(resolveBinary(' /opt/zero ', ext, 'linux', () => true), '/opt/zero');
  assert.equal(resolveBinary('', ext, 'linux', (p) => p === path.join(ext, 'bin', 'zero')), path.join(ext, 'bin', 'zero'));
  assert.equal(resolveBinary('', ext, 'win32', (p) => p.endsWith('zero.exe')), path.join(ext, 'bin', 'zero.exe'));
  assert.equal(resolveBinary('', ext, 'linux', () => false), 'zero');
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
