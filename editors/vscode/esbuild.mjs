// Bundles the extension (Node, CommonJS, vscode external), the webview
// script (browser, IIFE) and, with --tests, the unit tests.
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';

const args = new Set(process.argv.slice(2));
const production = args.has('--production');
const watch = args.has('--watch');

const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'info', target: 'es2022' };

const builds = [];
if (args.has('--tests')) {
  const tests = readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
  builds.push({ ...common, sourcemap: true, minify: false, entryPoints: tests, outdir: 'out/test', platform: 'node', format: 'cjs', external: ['vscode'] });
} else {
  builds.push({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', external: ['vscode'] });
  builds.push({ ...common, entryPoints: ['src/webview/main.ts'], outfile: 'dist/webview.js', platform: 'browser', format: 'iife' });
}

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
