// How the server is started: which binary, which flags, which environment.
// Pure, so it is unit tested.

import * as path from 'node:path';

export interface LaunchSettings {
  /** zero.path: empty means the bundled binary, else `zero` on PATH. */
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

/** The binary to run: zero.path, else bin/zero(.exe) in the extension when present, else `zero` (PATH). */
export function resolveBinary(setting: string, extensionPath: string, platform: NodeJS.Platform, exists: (p: string) => boolean): string {
  const s = setting.trim();
  if (s !== '') return s;
  const bundled = path.join(extensionPath, 'bin', platform === 'win32' ? 'zero.exe' : 'zero');
  return exists(bundled) ? bundled : 'zero';
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
