// Bundles the extension into dist/extension.js (one file, so the .vsix needs no node_modules), and the
// profile view's page script (webview/profile.mjs + its d3 modules) into ../server/webview/profile.js —
// the package-data folder that both `warpwise advise --format html` and the .vsix use — then copies that
// folder's page assets into dist/webview/ for the webview panel.
//   node esbuild.mjs [--production] [--webview-only | --check-webview]
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const production = process.argv.includes('--production');
const webviewOnly = process.argv.includes('--webview-only');
const ASSETS = path.resolve('..', 'server', 'webview');

const webview = {
  entryPoints: ['webview/profile.mjs'],
  bundle: true,
  outfile: path.join(ASSETS, 'profile.js'),
  platform: 'browser',
  format: 'iife',
  target: 'es2020',
  minify: true,
  legalComments: 'eof',
  // the bundled d3 modules' ISC licences travel with every copy of the page (the .vsix and each HTML file)
  banner: { js: `/*!\n${fs.readFileSync(path.join(ASSETS, 'THIRD-PARTY-NOTICES.txt'), 'utf8').replaceAll('*/', '* /')}*/` },
  logLevel: 'info',
};
if (process.argv.includes('--check-webview')) {
  // the committed bundle (package data of the Python package) must be what the page's source builds to
  const built = await esbuild.build({ ...webview, write: false, logLevel: 'error' });
  const want = built.outputFiles[0].text;
  const have = fs.existsSync(webview.outfile) ? fs.readFileSync(webview.outfile, 'utf8') : '';
  if (want !== have) {
    console.error(`${webview.outfile} is not the build of webview/profile.mjs: run npm run build:webview and commit it`);
    process.exit(1);
  }
  process.exit(0);
}
await esbuild.build(webview);
fs.mkdirSync('dist/webview', { recursive: true });
for (const f of ['profile.html', 'profile.css', 'profile.js', 'THIRD-PARTY-NOTICES.txt']) fs.copyFileSync(path.join(ASSETS, f), path.join('dist/webview', f));

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
