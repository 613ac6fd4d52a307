// How the server is started: which binary, which flags, which environment.
// Pure, so it is unit tested.

import * as path from 'node:path';

export interface LaunchSettings {
  /** zero.path from the user's settings (userPath): empty means the bundled binary, else `zero` on PATH. */
  path: string;
  model: string;
  baseUrl: string;
  profile: string;
  sandbox: string;
  approval: string;
  env: Record<string, unknown>;
}

/** The variables zero.env may not set: the API key lives in SecretStorage. */
export const SECRET_VARS = ['OPENAI_API_KEY'];

/** Where the binary Zero starts comes from, for the output channel. */
export type BinarySource = 'setting' | 'bundled' | 'PATH';

/** The binary to start, where it comes from, and why, in words. */
export interface Binary {
  path: string;
  source: BinarySource;
  why: string;
}

/** zero.path as VS Code's inspect() reports it, each place it may be set. */
export interface PathSetting {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * zero.path from the user's own settings only (inspect's globalValue). A
 * value in a workspace's or a folder's settings is never used, whatever
 * the setting's scope says: a repository must not choose the program Zero
 * runs. ignored names where such a value was found, to say so.
 */
export function userPath(inspected: PathSetting | undefined): { path: string; ignored: string[] } {
  const ignored: string[] = [];
  if (typeof inspected?.workspaceValue === 'string' && inspected.workspaceValue.trim() !== '') ignored.push('the workspace settings');
  if (typeof inspected?.workspaceFolderValue === 'string' && inspected.workspaceFolderValue.trim() !== '') ignored.push("a folder's settings");
  const v = inspected?.globalValue;
  return { path: typeof v === 'string' ? v.trim() : '', ignored };
}

/**
 * The binary to run: zero.path (the user's), else bin/zero(.exe) in the
 * extension when present, else `zero` on PATH; with where it came from.
 */
export function resolveBinary(setting: string, extensionPath: string, platform: NodeJS.Platform, exists: (p: string) => boolean): Binary {
  const s = setting.trim();
  if (s !== '') {
    return { path: s, source: 'setting', why: `zero.path in your user settings${exists(s) ? '' : ', which does not exist on this machine'}` };
  }
  const bundled = path.join(extensionPath, 'bin', platform === 'win32' ? 'zero.exe' : 'zero');
  if (exists(bundled)) return { path: bundled, source: 'bundled', why: 'bundled with the extension; zero.path is not set' };
  return { path: 'zero', source: 'PATH', why: '`zero` on PATH; zero.path is not set and no binary is bundled' };
}

/** `zero lsp` and its flags from the settings (empty ones are left to Zero's own defaults). */
export function serverArgs(s: LaunchSettings): string[] {
  const args = ['lsp'];
  const flag = (name: string, v: string) => {
    if (v.trim() !== '') args.push(`--${name}`, v.trim());
  };
  flag('model', s.model);
  flag('base-url', s.baseUrl);
  flag('profile', s.profile);
  flag('sandbox', s.sandbox);
  flag('approval', s.approval);
  return args;
}

/**
 * The server's environment: the editor's, then zero.env (strings only, no
 * secrets), then the API key from SecretStorage. Returns the variables of
 * zero.env that were ignored, to say so.
 */
export function serverEnv(
  base: Record<string, string | undefined>,
  s: LaunchSettings,
  apiKey: string | undefined,
): { env: Record<string, string>; ignored: string[] } {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  const ignored: string[] = [];
  for (const [k, v] of Object.entries(s.env ?? {})) {
    if (SECRET_VARS.includes(k.toUpperCase()) || typeof v !== 'string') {
      ignored.push(k);
      continue;
    }
    env[k] = v;
  }
  if (apiKey) env.OPENAI_API_KEY = apiKey;
  return { env, ignored };
}

/** A message for a server that could not start, saying what to do. */
export function startFailure(binary: string, err: unknown, stderrTail: string): string {
  const msg = err instanceof Error ? err.message : String(err ?? '');
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ENOENT' || /ENOENT|not found/i.test(msg)) {
    return binary === 'zero'
      ? 'Zero: the `zero` binary was not found on PATH and none is bundled. Install Zero (build it with `go build ./cmd/zero`) and set `zero.path` to it.'
      : `Zero: the binary \`${binary}\` was not found. Fix the setting \`zero.path\` (or clear it to use \`zero\` on PATH).`;
  }
  if (/EACCES/.test(msg)) return `Zero: \`${binary}\` is not executable (chmod +x it, or fix \`zero.path\`).`;
  const tail = stderrTail.trim().split('\n').slice(-3).join(' ').trim();
  if (/model/i.test(tail) && /(ZERO_MODEL|--model|no model)/i.test(tail)) {
    return `Zero: no model is configured. Set \`zero.model\` (and \`zero.baseUrl\` for a non-OpenAI endpoint), then the key with "Zero: Set API Key". Server said: ${tail}`;
  }
  return `Zero: the server \`${binary} lsp\` could not start${msg ? `: ${msg}` : ''}${tail ? `. Server said: ${tail}` : ''}. See "Zero: Show Output".`;
}
