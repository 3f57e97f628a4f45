// How fast the profile view is on a 5,000-line file (issue 11): fills the page (server/webview/profile.*,
// the same files the .vsix and `advise --format html` use) with a synthetic kernel of 5,000 source lines,
// 2,500 of them sampled, 20,000 SASS instructions and 10,000 blame edges, opens it in headless Chromium
// and measures the time to the first drawn rows, to a scroll to the end, and to selecting a line by
// keyboard; also counts the rows in the DOM (only those in view are rendered).
//   node bench/editor/profile_view_5k.mjs        (needs npm ci and /usr/bin/chromium)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const ASSETS = path.join(ROOT, 'server', 'webview');
const read = (f) => fs.readFileSync(path.join(ASSETS, f), 'utf8');
const N = 5000;
const reasons = ['long_scoreboard', 'mio_throttle', 'short_scoreboard', 'wait', 'not_selected', 'selected', 'lg_throttle'];
let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const file = '/synthetic/kernel.cu';
const src = Array.from({ length: N }, (_, i) => `  acc${i % 7} += data[idx + ${i}] * w${i % 13};  // line ${i + 1}`);
const lines = [];
const sass = [];
const blame = [];
for (let l = 1; l <= N; l += 2) {
  const stalls = Object.fromEntries(reasons.map((r) => [r, Math.floor(rnd() * 400)]));
  const samples = Object.values(stalls).reduce((a, b) => a + b, 0);
  lines.push({ file, line: l, samples, latency: Math.floor(samples * 0.7), stalls });
  for (let k = 0; k < 8; k++) {
    const pc = sass.length * 16;
    sass.push({ id: `k:${pc.toString(16)}`, function: 'k', pc, file, line: l, text: `FFMA R${k}, R${k + 1}, R${k + 2}, R${k}`, opcode: 'FFMA', samples: Math.floor(samples / 8), stalls: { wait: Math.floor(samples / 8) } });
    if (k > 0) blame.push({ use: sass[sass.length - 1].id, def: sass[sass.length - 2].id, reason: 'wait', samples: 10 + k, distance: 1 });
  }
}
const data = { version: 1, kernels: [{ name: 'synthetic', mangled: '_Z9syntheticv', arch: 'sm_90', device: 'none', report: '/synthetic/r.ncu-rep', reports: ['/synthetic/r.ncu-rep'], launches: 1, rule: 'one launch', total: lines.reduce((a, l) => a + l.samples, 0), bound: '', files: { [file]: src }, lines, sass, blame, advice: [] }] };
const fill = { WARPWISE_TITLE: 'bench', '/*WARPWISE_CSS*/': read('profile.css'), '/*WARPWISE_JS*/': read('profile.js'), WARPWISE_DATA: JSON.stringify(data).replace(/<\//g, '<\\/') };
const html = read('profile.html').replace(/WARPWISE_TITLE|\/\*WARPWISE_CSS\*\/|\/\*WARPWISE_JS\*\/|WARPWISE_DATA/g, (m) => fill[m]);
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ww-pv-')), 'page.html');
fs.writeFileSync(out, html);

const browser = await chromium.launch({ executablePath: process.env.WARPWISE_E2E_CHROMIUM || '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
const t0 = Date.now();
await page.goto(`file://${out}`);
await page.waitForSelector('#src-scroll .row');
const tFirst = Date.now() - t0;
const rowsInDom = await page.locator('#src-scroll .row').count();
const t1 = Date.now();
await page.evaluate(() => { const s = document.getElementById('src-scroll'); s.scrollTop = s.scrollHeight; s.dispatchEvent(new Event('scroll')); });
await page.waitForSelector(`#L${N}`);
const tScroll = Date.now() - t1;
await page.locator('#src-scroll').focus();
const t2 = Date.now();
await page.keyboard.press('Home');
await page.waitForFunction(() => /line 1$/i.test(document.querySelector('#sass h2')?.textContent || ''));
const tKey = Date.now() - t2;
await browser.close();
fs.rmSync(path.dirname(out), { recursive: true, force: true });
console.log(`profile view, ${N} lines (${lines.length} sampled, ${sass.length} SASS rows, ${blame.length} edges, page ${(html.length / 1e6).toFixed(1)} MB): ` +
  `first rows drawn ${tFirst} ms, scroll to the end ${tScroll} ms, Home key to line 1 ${tKey} ms, ${rowsInDom} source rows in the DOM`);
