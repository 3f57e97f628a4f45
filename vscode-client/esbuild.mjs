// Bundles the extension into dist/extension.js (one file, so the .vsix needs no node_modules), and the
// profile view's page script (webview/profile.mjs + its d3 modules) into ../server/webview/profile.js —
// the package-data folder that both `warpwise advise --format html` and the .vsix use — then copies that
// folder's page assets into dist/webview/ for the webview panel.
//   node esbuild.mjs [--production] [--webview-only]
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const production = process.argv.includes('--production');
const webviewOnly = process.argv.includes('--webview-only');
const ASSETS = path.resolve('..', 'server', 'webview');

await esbuild.build({
  entryPoints: ['webview/profile.mjs'],
  bundle: true,
  outfile: path.join(ASSETS, 'profile.js'),
  platform: 'browser',
  format: 'iife',
  target: 'es2020',
  minify: true,
  legalComments: 'eof', // d3's ISC notices stay in the bundle
  logLevel: 'info',
});
fs.mkdirSync('dist/webview', { recursive: true });
for (const f of ['profile.html', 'profile.css', 'profile.js']) fs.copyFileSync(path.join(ASSETS, f), path.join('dist/webview', f));

if (!webviewOnly) {
  await esbuild.build({
    entryPoints: ['src/extension.ts'],
    bundle: true,
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    external: ['vscode'],
    minify: production,
    sourcemap: !production,
    logLevel: 'info',
  });
}
