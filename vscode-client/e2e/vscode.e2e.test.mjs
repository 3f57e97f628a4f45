// End-to-end test of the packaged extension in a real VS Code (code-server) driven by headless
// Chromium: install the .vsix, open a workspace with real profiles — the stencil example with its report
// twice (two reports of one kernel) and the CDP example — and check what is RENDERED: one squiggle per line
// (Problems panel rows per line), the hover's summary first, inlay and lens text, the report picker, the
// profile view webview's content and its reveal-in-editor, findings retired after the 0.1f quick fix and
// moved with inserted lines, the CDP launch line's cost, a quiet output channel; then break
// warpwise.server.path and check the "server not found" notification. Screenshots for docs/img are taken
// on the way (WARPWISE_E2E_DOCS_IMG=1 copies them there).
// Run through e2e/run.sh, which installs code-server, Node 24 and Chromium and sets the variables below.
// Every connection stays on 127.0.0.1: code-server's gallery points at a closed loopback port and the
// browser aborts any request that is not for the loopback address.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run vscode-client/e2e/run.sh`);
  return v;
}

const CODE_SERVER = need('WARPWISE_E2E_CODE_SERVER'); // code-server's out/node/entry.js
const NODE24 = need('WARPWISE_E2E_NODE'); // Node 24 binary that runs code-server
const VSIX = need('WARPWISE_E2E_VSIX');
const SERVER = need('WARPWISE_E2E_SERVER'); // the warpwise executable
const EXAMPLE = process.env.WARPWISE_E2E_EXAMPLE || 'stencil';
const DOCS_IMG = process.env.WARPWISE_E2E_DOCS_IMG ? path.join(ROOT, 'docs', 'img') : undefined;
const CHROMIUM = process.env.WARPWISE_E2E_CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = path.resolve(process.env.WARPWISE_E2E_ARTIFACTS || path.join(ROOT, 'test-artifacts', 'vscode-e2e'));
const TIMEOUT_MS = Number(process.env.WARPWISE_E2E_TIMEOUT_MS || 120000); // first analysis included
const SPEEDUP = /\d+(?:\.\d+)?\s?×/;
const SQUIGGLE = ['error', 'warning', 'info', 'hint'].map((k) => `.monaco-editor .squiggly-${k}`).join(', ');
const VIEWPORT = { width: 1280, height: 800 };

/** A screenshot clip around a box, kept inside the viewport. */
function clipAround(box, pad) {
  const x = Math.max(0, box.x - pad);
  const y = Math.max(0, box.y - pad);
  return { x, y, width: Math.min(VIEWPORT.width - x, box.width + 2 * pad), height: Math.min(VIEWPORT.height - y, box.height + 2 * pad) };
}

/** A free TCP port on 127.0.0.1 (asked from the kernel, then released for code-server). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(what, fn, timeoutMs = TIMEOUT_MS, intervalMs = 500) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

function copyExample(ws, name) {
  const src = path.join(ROOT, 'examples', name);
  const dst = path.join(ws, 'examples', name);
  fs.mkdirSync(dst, { recursive: true });
  for (const f of fs.readdirSync(src)) {
    if (/\.(cu|cuh|ncu-rep|cubin)$/.test(f)) fs.copyFileSync(path.join(src, f), path.join(dst, f));
  }
  const common = path.join(ROOT, 'examples', 'common.cuh');
  if (fs.existsSync(common)) fs.copyFileSync(common, path.join(ws, 'examples', 'common.cuh'));
  const cu = path.join(dst, `${name}.cu`);
  assert.ok(fs.existsSync(cu), `example source ${cu} is missing`);
  const reports = fs.readdirSync(dst).filter((f) => f.endsWith('.ncu-rep'));
  assert.ok(reports.length > 0, `example ${name} has no .ncu-rep`);
  return { cu, report: path.join(dst, reports[0]) };
}

function userSettings(extra = {}) {
  return {
    'warpwise.server.path': SERVER,
    'warpwise.trace.server': 'off', // the output channel must stay quiet (WARNING) unless trace asks for more
    'editor.inlayHints.enabled': 'on',
    'editor.codeLens': true,
    'editor.hover.delay': 200,
    'editor.minimap.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'chat.disableAIFeatures': true,
    'chat.commandCenter.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'security.workspace.trust.enabled': false,
    'git.enabled': false,
    'files.exclude': { '**/*.csv': true },
    ...extra,
  };
}

describe('warpwise in VS Code (code-server + Chromium)', { timeout: 6 * 60 * 1000 }, () => {
  let tmp, userData, cuFile, secondReport, codeServer, browser, page, port;
  const serverLog = [];
  const blocked = [];

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'warpwise-e2e-'));
    userData = path.join(tmp, 'user-data');
    const extDir = path.join(tmp, 'extensions');
    const ws = path.join(tmp, 'ws');
    fs.mkdirSync(ws);
    const main = copyExample(ws, EXAMPLE);
    cuFile = main.cu;
    // a second report of the same kernel, older than the first: two reports of one kernel, the newest active
    secondReport = path.join(path.dirname(main.report), `${EXAMPLE}-rerun.ncu-rep`);
    fs.copyFileSync(main.report, secondReport);
    const old = new Date(Date.now() - 3600 * 1000);
    fs.utimesSync(secondReport, old, old);
    if (EXAMPLE !== 'cdp') copyExample(ws, 'cdp');
    // a real H200 report with three launches of one kernel (price_calls on 8192, 16384 and 4096 blocks)
    const pairs = path.join(ROOT, 'bench', 'advice', 'pairs');
    fs.mkdirSync(path.join(ws, 'advice', 'bs_batches'), { recursive: true });
    fs.copyFileSync(path.join(pairs, 'bench.cuh'), path.join(ws, 'advice', 'bench.cuh'));
    for (const f of ['orig.cu', 'orig.sm_90.cubin']) {
      fs.copyFileSync(path.join(pairs, 'bs_batches', f), path.join(ws, 'advice', 'bs_batches', f));
    }
    // the bench commits its reports xz-compressed (bench/advice/reports.py): unpack with Python's lzma
    execFileSync('python3', ['-c', 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))',
      path.join(pairs, 'bs_batches', 'orig.ncu-rep.xz'), path.join(ws, 'advice', 'bs_batches', 'orig.ncu-rep')],
    { timeout: 60000 });
    // a real H200 report with 45 launches of one kernel (a bitonic network, one launch per stage): the hover lists
    // their range, not each launch
    const sortPair = path.join(ROOT, 'bench', 'advice', 'holdout11', 'pairs', 'bitonic_segments');
    fs.mkdirSync(path.join(ws, 'sort', 'bitonic_segments'), { recursive: true });
    fs.copyFileSync(path.join(pairs, 'bench.cuh'), path.join(ws, 'sort', 'bench.cuh'));
    for (const f of ['orig.cu', 'orig.sm_90.cubin']) {
      fs.copyFileSync(path.join(sortPair, f), path.join(ws, 'sort', 'bitonic_segments', f));
    }
    execFileSync('python3', ['-c', 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))',
      path.join(sortPair, 'orig.ncu-rep.xz'), path.join(ws, 'sort', 'bitonic_segments', 'orig.ncu-rep')],
    { timeout: 60000 });
    writeSettings(userSettings());
    port = await freePort();
    fs.writeFileSync(path.join(userData, 'config.yaml'), `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);

    const env = {
      ...process.env,
      PATH: `${path.dirname(NODE24)}:${process.env.PATH}`,
      // a closed loopback port: the gallery is never reached, and nothing leaves the machine
      EXTENSIONS_GALLERY: JSON.stringify({
        serviceUrl: 'http://127.0.0.1:9/gallery',
        itemUrl: 'http://127.0.0.1:9/item',
        resourceUrlTemplate: 'http://127.0.0.1:9/resource',
      }),
    };
    const common = [
      '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
      '--user-data-dir', userData, '--extensions-dir', extDir, '--config', path.join(userData, 'config.yaml'),
    ];
    execFileSync(NODE24, [CODE_SERVER, ...common, '--install-extension', VSIX], { env, stdio: 'pipe', timeout: 120000 });
    assert.ok(fs.readdirSync(extDir).some((d) => d.startsWith('warpwise.warpwise-')), 'the .vsix did not install');

    codeServer = spawn(NODE24, [CODE_SERVER, ...common, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', ws], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: the extension host and warpwise server end with it
    });
    codeServer.stdout.on('data', (d) => serverLog.push(String(d)));
    codeServer.stderr.on('data', (d) => serverLog.push(String(d)));
    await waitFor('code-server to listen', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60000);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
      ],
    });
    const context = await browser.newContext({ viewport: VIEWPORT });
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) || url.protocol === 'data:' || url.protocol === 'blob:') {
        return route.continue();
      }
      blocked.push(url.href);
      return route.abort();
    });
    page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    await openFile(`${EXAMPLE}.cu`);
    await page.keyboard.press('Control+B'); // hide the side bar: the editor gets the whole width
  });

  after(async () => {
    try {
      if (page) await page.screenshot({ path: path.join(ARTIFACTS, 'last.png') });
    } catch {
      // the page may be gone
    }
    await browser?.close();
    if (codeServer && codeServer.exitCode === null) {
      const exited = new Promise((r) => codeServer.once('exit', r));
      process.kill(-codeServer.pid, 'SIGTERM');
      const timer = new Promise((r) => setTimeout(() => r('timeout'), 5000));
      if ((await Promise.race([exited, timer])) === 'timeout') {
        try {
          process.kill(-codeServer.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    fs.writeFileSync(path.join(ARTIFACTS, 'code-server.log'), serverLog.join(''));
    fs.writeFileSync(path.join(ARTIFACTS, 'blocked-requests.txt'), blocked.join('\n'));
    const exthost = findLogs(path.join(userData ?? '', 'logs'));
    for (const f of exthost) fs.copyFileSync(f, path.join(ARTIFACTS, path.basename(path.dirname(f)) + '-' + path.basename(f)));
    if (tmp && !process.env.WARPWISE_E2E_KEEP) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * Writes the user settings and the same into the Machine settings: code-server is a remote window,
   * where machine-scoped settings (warpwise.server.path, .python) are read only from the latter.
   */
  function writeSettings(values) {
    for (const scope of ['User', 'Machine']) {
      fs.mkdirSync(path.join(userData, scope), { recursive: true });
      fs.writeFileSync(path.join(userData, scope, 'settings.json'), JSON.stringify(values, null, 2));
    }
  }

  /** The extension host's and warpwise's output-channel logs, for the artifacts. */
  function findLogs(dir) {
    const out = [];
    if (!fs.existsSync(dir)) return out;
    for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
      const p = path.join(e.parentPath ?? e.path, e.name);
      if (e.isFile() && /(exthost|warpwise)[^/]*\.log$/i.test(e.name)) out.push(p);
    }
    return out;
  }

  /** Opens a workspace file by quick open: ``query`` is its name, or folder/name where two files share a name. */
  async function openFile(query) {
    const name = path.basename(query);
    await page.keyboard.press('Escape');
    await page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } }).catch(() => undefined);
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 20000 });
    await input.fill(query);
    const first = page.locator('.quick-input-list .monaco-list-row').first();
    try {
      // the list settles on the exact file first (fuzzy matches like stencil.sm_90.cubin come later)
      await waitFor(`quick open to list ${name} first`, async () => (await first.locator('.label-name').first().innerText()).trim() === name, 20000, 200);
      await page.keyboard.press('Enter');
      await page.locator(`.tab[aria-label*="${name}"]`).first().waitFor({ timeout: 20000 });
      await page.locator('.editor-group-container .monaco-editor .view-lines').filter({ visible: true }).first().waitFor({ timeout: 20000 });
    } catch (e) {
      await shot(`open-failed-${name}`);
      throw e;
    }
  }

  async function shot(name, clip, docsName) {
    const file = path.join(ARTIFACTS, `${name}.png`);
    await page.screenshot({ path: file, ...(clip ? { clip } : {}) });
    if (DOCS_IMG && docsName) fs.copyFileSync(file, path.join(DOCS_IMG, `${docsName}.png`));
    return file;
  }

  /** Problems-panel rows of warpwise, as {line, text} (what the panel renders). */
  async function problemRows() {
    const rows = page.locator('.markers-panel .monaco-list-row');
    const out = [];
    for (const t of await rows.allInnerTexts()) {
      const m = /Ln (\d+), Col \d+/.exec(t);
      if (m && /warpwise/.test(t)) out.push({ line: Number(m[1]), text: t.replace(/\s+/g, ' ') });
    }
    return out;
  }

  async function withProblems(fn) {
    await page.keyboard.press('Control+Shift+M');
    try {
      await page.locator('.markers-panel').first().waitFor({ timeout: 20000 });
      return await fn();
    } finally {
      await page.keyboard.press('Control+Shift+M');
    }
  }

  function lensTexts() {
    return page.locator('.monaco-editor .codelens-decoration a, .monaco-editor .codelens-decoration span').allInnerTexts();
  }

  const INLAY = 'span[class*="dyn-rule"], span[class*="inlay"]';
  /** Text as rendered, with the editor's non-breaking spaces as plain ones. */
  const norm = (t) => t.replace(/\s+/g, ' ').trim();

  /** The view line (DOM) holding `text`. */
  function viewLine(text) {
    return page.locator('.monaco-editor .view-line').filter({ hasText: text }).first();
  }

  async function hoverOver(locator, want) {
    const anyHover = page.locator('.monaco-hover:not(.hidden)');
    const hover = anyHover.filter({ hasText: want });
    await waitFor(`a hover matching ${want}`, async () => {
      const box = await locator.boundingBox();
      if (!box) return false;
      await page.mouse.move(box.x + 2, box.y + box.height / 2);
      await page.mouse.move(box.x + Math.min(box.width / 2, 60), box.y + box.height / 2);
      await page.waitForTimeout(800);
      return (await hover.count()) > 0;
    }, 30000, 200);
    return hover.first();
  }

  /** Scrolls the hover (mouse wheel over it) until warpwise's own part starts near its top. */
  async function scrollHoverTo(hover, box) {
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let i = 0; i < 12; i++) {
      const head = await hover.locator('text=/warp samples \\([\\d,]+ of [\\d,]+\\)/').first().boundingBox();
      if (!head || head.y - box.y < 50) break;
      await page.mouse.wheel(0, Math.min(60, head.y - box.y - 40));
      await page.waitForTimeout(150);
    }
  }

  async function closeHover() {
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    await page.waitForTimeout(300);
  }

  test('the example opens as CUDA C++', async () => {
    const mode = page.locator('.statusbar-item[id="status.editor.mode"]');
    await waitFor('the language mode CUDA C++', async () => /CUDA C\+\+/.test(await mode.innerText()), 30000);
  });

  test('one warpwise squiggle per line: the best finding, with two reports of the kernel loaded', async () => {
    const squiggle = page.locator(SQUIGGLE);
    await waitFor('a squiggle in the editor', async () => (await squiggle.count()) > 0);
    // the open file gets its diagnostics from the first report in; wait for the whole workspace too
    const status = page.locator('.statusbar-item').filter({ hasText: /warpwise/ });
    await waitFor('all five reports loaded', async () => /5 profiles · 4 kernels/.test(await status.first().innerText()));
    await shot('vscode-diagnostics');
    await withProblems(async () => {
      const rows = await waitFor('warpwise rows in the Problems panel', async () => {
        const r = await problemRows();
        return r.some((x) => x.line === 18) ? r : false;
      }, 30000);
      const perLine = new Map();
      for (const r of rows) perLine.set(r.line, (perLine.get(r.line) ?? 0) + 1);
      assert.deepEqual([...perLine.values()].filter((n) => n > 1), [], `lines with several warpwise rows: ${JSON.stringify(rows)}`);
      const l18 = rows.find((r) => r.line === 18).text;
      assert.match(l18, /strength_reduction est\. 2\.19× if fixed — write 0\.1f · line has 94\.3% of blur_rows's warp samples \(mio_throttle \d+%\)/);
      assert.ok(!rows.some((r) => /1\.0[01]×/.test(r.text) && !/also/.test(r.text)), 'advice below 1.02× is no diagnostic');
      await shot('vscode-problems');
    });
  });

  test('inlay hint: the line\'s share (never above 100%) and its best estimate', async () => {
    const line = viewLine('acc += 0.1 * row');
    const hint = line.locator(INLAY).filter({ hasText: /%/ });
    await waitFor('the inlay hint on stencil.cu:18', async () => (await hint.count()) > 0);
    assert.equal(norm(await hint.first().innerText()), '94.3% of warp samples · est. 2.19× if fixed');
    for (const t of await page.locator('.monaco-editor .view-lines').first().locator(INLAY).filter({ hasText: /%/ }).allInnerTexts()) {
      const pct = Number(/([\d.]+)%/.exec(t)?.[1] ?? 0);
      assert.ok(pct <= 100, `inlay "${t}" is above 100%`);
    }
    await shot('vscode-inlay-hints');
  });

  test('code lens: kernel, launch count, the active (newest) report of two, and the picker', async () => {
    // the lens is refreshed once every report is in (the open file was published from the first one)
    const texts = await waitFor('the kernel lens naming both reports', async () => {
      const t = (await lensTexts()).map(norm).filter(Boolean);
      return t.some((x) => /blur_rows.*newest of 2/.test(x)) ? t : false;
    }, 30000);
    const main = texts.find((t) => /blur_rows/.test(t));
    assert.match(main, /^warpwise: blur_rows · 1 launch · report stencil\.ncu-rep \(newest of 2\) · 28,464 warp samples · .*top: strength_reduction 2\.19×$/);
    assert.ok(texts.some((t) => /choose report \(2\)/.test(t)), texts.join(' | '));
    assert.ok(texts.some((t) => /show report/.test(t)));
    const item = page.locator('.statusbar-item').filter({ hasText: /kernel in several reports/ });
    await waitFor('the report picker in the status bar', async () => (await item.count()) > 0, 20000);
    const editor = await page.locator('.editor-group-container .monaco-editor').first().boundingBox();
    // wide enough for line 18's whole inlay (it ends ~1150 px right of the editor's left edge)
    if (editor) await shot('vscode-editor', { x: editor.x, y: editor.y, width: Math.min(editor.width, 1160), height: Math.min(editor.height, 420) }, 'vscode-editor');
    // the picker lists both reports, newest first, and choosing the older one makes it active
    await page.locator('.monaco-editor .codelens-decoration a').filter({ hasText: /choose report/ }).first().click();
    const picks = page.locator('.quick-input-widget .monaco-list-row');
    await waitFor('two reports in the picker', async () => (await picks.count()) === 2, 20000);
    const labels = await picks.allInnerTexts();
    assert.match(labels[0], /stencil\.ncu-rep.*newest/s);
    assert.match(labels[1], /stencil-rerun\.ncu-rep/);
    await shot('vscode-report-picker', undefined, 'vscode-two-reports-picker');
    await picks.nth(1).click();
    await waitFor('the lens to name the chosen report', async () => (await lensTexts()).some((t) => /report stencil-rerun\.ncu-rep \(1 of 2\)/.test(t)), 20000);
    // back to the newest
    await page.locator('.monaco-editor .codelens-decoration a').filter({ hasText: /choose report/ }).first().click();
    await waitFor('two reports in the picker', async () => (await picks.count()) === 2, 20000);
    await picks.nth(0).click();
    await waitFor('the newest report active again', async () => (await lensTexts()).some((t) => /newest of 2/.test(t)), 20000);
  });

  test('the hover starts with warpwise\'s summary: share, reason bars, top advice with its confidence', async () => {
    const hover = await hoverOver(viewLine('acc += 0.1 * row').locator('span').first(), SPEEDUP);
    try {
      const text = norm(await hover.innerText());
      // VS Code puts the line's (single) diagnostic first, then warpwise's hover: its summary comes next
      const iHead = text.indexOf('warpwise · blur_rows · 1 launch · report stencil.ncu-rep (newest of 2)');
      const iTable = text.indexOf('stall reason');
      assert.ok(iHead >= 0 && iTable > iHead && text.indexOf("this line: 94.3% of blur_rows's warp samples", iHead) < iTable, text.slice(0, 600));
      assert.equal(text.split('strength_reduction est. 2.19× if fixed —').length - 1, 1, 'one diagnostic in the hover');
      assert.match(text, /mio_throttle █/);
      assert.match(text, /strength_reduction — estimated 2\.19× for the kernel if fixed \(95% interval [\d.]+–[\d.]+×, 28,464 samples\)/);
      assert.match(text, /LDG\.E\.CONSTANT at line 18, 11 instructions earlier/);
      // the summary is in view without scrolling: it starts near the top of the hover box
      const box = await hover.boundingBox();
      const pos = await hover.locator('text=/warp samples \\([\\d,]+ of [\\d,]+\\)/').first().boundingBox();
      // VS Code draws the diagnostic (one short line, one related row) above it: 189 px before, bound 120
      const offset = pos && box ? Math.round(pos.y - box.y) : NaN;
      console.log(`hover: warpwise summary ${offset} px below the hover top`);
      await shot('vscode-hover-top', clipAround(box, 12), 'vscode-hover-top');
      assert.ok(offset <= 120, `the summary is near the top of the hover (${offset} px)`);
      // scrolled to warpwise's part (VS Code puts the line's diagnostic above it): the picture for the docs
      await scrollHoverTo(hover, box);
      await shot('vscode-hover', clipAround(box, 12), 'vscode-hover');
    } finally {
      await closeHover();
    }
  });

  test('the profile view: source heat gutter, stall bars, SASS with blame arrows, ranked advice, reveal', async () => {
    await page.locator('.monaco-editor .codelens-decoration a').filter({ hasText: /blur_rows/ }).first().click();
    const outer = page.frameLocator('iframe.webview.ready');
    const view = outer.frameLocator('iframe#active-frame');
    await waitFor('the profile view page', async () => (await view.locator('#src-scroll .row').count()) > 0, 30000);
    const rows = await view.locator('#src-scroll .row').count();
    const lines = fs.readFileSync(cuFile, 'utf8').split('\n').length;
    assert.ok(rows > 10 && rows <= lines, `rows rendered: ${rows}`);
    assert.equal((await view.locator('#L18 .pct').innerText()).trim(), '94.3%');
    assert.ok((await view.locator('#L18 .seg').count()) >= 3, 'a stacked stall-reason bar on line 18');
    assert.match(await view.locator('#sass h2').innerText(), /SASS of line 18/i);
    assert.ok((await view.locator('#sass .ins').count()) > 5);
    assert.ok((await view.locator('#sass path.edge').count()) > 0, 'blame arrows');
    const firstAdvice = view.locator('#advice button.adv').first();
    assert.match(await firstAdvice.innerText(), /strength_reduction\s+2\.19×/);
    assert.match(await view.locator('#legend').innerText(), /mio_throttle/);
    // the code column starts at one x on every row, with a share or without (docs/img showed them apart)
    const lefts = await view.locator('#src-scroll .row').evaluateAll((rs) => rs.map((r) => [r.querySelector('.pct').textContent !== '', Math.round(r.querySelector('.code').getBoundingClientRect().left)]));
    console.log(`profile view code column x: ${JSON.stringify([...new Set(lefts.map((l) => l.join(':')))])}`);
    assert.ok(lefts.some(([s]) => s) && lefts.some(([s]) => !s));
    assert.equal(new Set(lefts.map(([, x]) => x)).size, 1, JSON.stringify(lefts));
    await page.waitForTimeout(300);
    await shot('vscode-profile-view-beside');
    // the panel maximized (View: Toggle Maximized Editor Group) for the docs picture
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+M');
    await page.waitForTimeout(800);
    await shot('vscode-profile-view', undefined, 'vscode-profile-view');
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+M');
    await page.waitForTimeout(500);
    // keyboard: down arrow selects line 19, then clicking the advice reveals line 18 in the editor
    await view.locator('#src-scroll').focus();
    await view.locator('#src-scroll').press('ArrowDown');
    await waitFor('line 19 selected', async () => /SASS of line 19/i.test(await view.locator('#sass h2').innerText()), 10000);
    await firstAdvice.click();
    const cursor = page.locator('.statusbar-item[id="status.editor.selection"]');
    await waitFor('the editor cursor on line 18', async () => /Ln 18,/.test(await cursor.innerText()), 20000);
    // close the panel (it is the active editor after the reveal? focus it first)
    await page.locator('.tab').filter({ hasText: /warpwise: blur_rows/ }).first().click();
    await page.keyboard.press('Control+W');
    await openFile(`${EXAMPLE}.cu`);
  });

  test('advise --format html: the standalone page draws the kernel notes (CDP device runtime, no line)', async () => {
    const html = execFileSync(SERVER, ['advise', path.join(ROOT, 'examples', 'cdp', 'cdp.cu'), '--format', 'html'], { timeout: 120000, maxBuffer: 64 << 20 });
    const p2 = await page.context().newPage();
    try {
      await p2.setContent(String(html));
      const notes = p2.locator('header ul.notes li');
      await notes.first().waitFor({ timeout: 20000 });
      const texts = (await notes.allInnerTexts()).map(norm);
      assert.ok(texts.some((t) => /^note: samples not on any source line: .* device runtime/.test(t)), texts.join(' | '));
    } finally {
      await p2.close();
    }
  });

  test('the status bar shows the loaded profiles and kernels', async () => {
    const item = page.locator('.statusbar-item').filter({ hasText: /warpwise/ });
    await waitFor('the warpwise status-bar item with counts', async () => /5 profiles · 4 kernels/.test(await item.first().innerText()));
    const box = await item.first().boundingBox();
    await shot('vscode-status-bar', box ? { x: Math.max(0, box.x - 10), y: box.y - 4, width: Math.min(520, 1280 - box.x + 10), height: box.height + 8 } : undefined);
  });

  test('clicking "show report" opens the text report in a read-only editor', async () => {
    const lens = page.locator('.monaco-editor .codelens-decoration a').filter({ hasText: /show report/i }).first();
    await lens.waitFor({ timeout: 20000 });
    await lens.click();
    const tab = page.locator('.tab').filter({ hasText: /warpwise report/ });
    await waitFor('the report tab', async () => (await tab.count()) > 0, 20000);
    const editor = page.locator('.editor-group-container').filter({ has: page.locator('.tab.active', { hasText: /warpwise report/ }) });
    await waitFor('report text naming blur_rows', async () => (await editor.locator('.view-lines').first().innerText()).includes('blur_rows'), 20000);
    await shot('vscode-report-full');
    await page.keyboard.press('Control+W');
    await openFile(`${EXAMPLE}.cu`);
  });

  test('lines inserted above move the findings and the numbers in their messages', async () => {
    await viewLine('Horizontal 9-tap blur').click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.type('// one\n// two\n');
    await withProblems(async () => {
      await waitFor('the advice on line 20, its blame row naming line 20', async () => {
        const r = await problemRows();
        const d = r.find((x) => x.line === 20);
        const all = (await page.locator('.markers-panel .monaco-list-row').allInnerTexts()).map(norm);
        return d && /strength_reduction/.test(d.text) && !r.some((x) => x.line === 18) &&
          all.some((t) => /long_scoreboard 6,845 samples blamed on LDG\.E\.CONSTANT at line 20/.test(t));
      }, 30000);
    });
    // the profile view shows the profiled text; revealing its line 18 goes to where that line is now (20)
    await page.locator('.monaco-editor .codelens-decoration a').filter({ hasText: /blur_rows/ }).first().click();
    const view = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
    await waitFor('the profile view page', async () => (await view.locator('#src-scroll .row').count()) > 0, 30000);
    const cursor = page.locator('.statusbar-item[id="status.editor.selection"]');
    await view.locator('#advice button.adv').first().click();
    await waitFor('the advice revealed at its current line 20', async () => /Ln 20,/.test(await cursor.innerText()), 20000);
    await page.locator('.tab').filter({ hasText: /warpwise: blur_rows/ }).first().click();
    await view.locator('#L18').click(); // the source pane's line 18 (profiled numbering)
    await waitFor('line 18 of the profile revealed at line 20', async () => /Ln 20,/.test(await cursor.innerText()), 20000);
    await page.locator('.tab').filter({ hasText: /warpwise: blur_rows/ }).first().click();
    await page.keyboard.press('Control+W');
    await openFile(`${EXAMPLE}.cu`);
    await viewLine('acc += 0.1 * row').click(); // focus the editor again
    await waitFor('the inserted lines undone', async () => {
      await page.keyboard.press('Control+Home'); // the first lines in view (the reveal may have scrolled them out)
      await page.waitForTimeout(150);
      // until line 1 reads as it did (an undo step can leave "// one" or "//" joined to the next line)
      const first = page.locator('.monaco-editor .view-line').filter({ hasText: 'Horizontal 9-tap blur' }).first();
      const left = await page.locator('.monaco-editor .view-line').filter({ hasText: /\/\/\s(one|two)/ }).count();
      if (left === 0 && (await first.count()) > 0 && norm(await first.innerText()).startsWith('// Horizontal 9-tap blur')) return true;
      await page.keyboard.press('Control+Z');
      return false;
    }, 10000, 300);
    await withProblems(async () => {
      await waitFor('the advice back on line 18', async () => (await problemRows()).some((x) => x.line === 18 && /strength_reduction/.test(x.text)), 30000)
        .catch(async (e) => {
          await shot('advice-back-missing');
          throw new Error(`${e.message}; rows: ${JSON.stringify(await problemRows())}`);
        });
    });
  });

  test('the 0.1f quick fix retires its advice everywhere and the lens says the profile is stale', async () => {
    const fix = page.locator('.action-widget .monaco-list-row, .context-view .action-item').filter({ hasText: /0\.1f/ }).first();
    await waitFor('the 0.1f quick fix in the Quick Fix menu', async () => {
      await page.keyboard.press('Escape');
      await viewLine('acc += 0.1 * row').locator('span').filter({ hasText: /acc/ }).first().click();
      await page.keyboard.press('Control+.');
      return fix.waitFor({ timeout: 5000 }).then(() => true, () => false);
    }, 30000, 500).catch(async (e) => {
      await shot('quick-fix-menu-missing');
      throw e;
    });
    // the quick fix names its advice and estimate (every advice of the line offers its fix, best first)
    assert.match(norm(await fix.innerText()), /strength_reduction 2\.19×: Write 0\.1f/);
    await fix.click();
    await waitFor('line 18 to read 0.1f', async () => /0\.1f \* row/.test(norm(await viewLine('acc += 0.1').innerText())), 20000);
    await waitFor('the stale lens', async () => (await lensTexts()).some((t) => /profile is stale \(1 profiled line edited\) · re-profile/.test(t)), 30000);
    const texts = await lensTexts();
    assert.ok(!texts.some((t) => /strength_reduction/.test(t)), texts.join(' | '));
    await withProblems(async () => {
      await waitFor('no strength_reduction row left', async () => {
        const r = await problemRows();
        return !r.some((x) => /strength_reduction|write 0\.1f/.test(x.text));
      }, 30000);
    });
    // the edited line's finding is kept, marked stale (a hint diagnostic: VS Code's three dots at the line's
    // start, no squiggle; inlay; hover), not silently dropped
    await waitFor('the stale hint diagnostic drawn', async () => (await page.locator('.monaco-editor .squiggly-hint').count()) > 0, 20000);
    const staleHint = viewLine('acc += 0.1f').locator(INLAY).filter({ hasText: /%/ });
    await waitFor('the stale inlay on the edited line', async () => (await staleHint.count()) > 0, 20000);
    assert.equal(norm(await staleHint.first().innerText()), 'stale (was 94.3% of warp samples)');
    const staleHover = await hoverOver(viewLine('acc += 0.1f').locator('span').filter({ hasText: /acc/ }).first(), /stale/);
    try {
      const t = norm(await staleHover.innerText());
      assert.match(t, /stale: this line was edited since profiling, so its findings describe the old text \(the profiled text of this line had 94\.3% of blur_rows's warp samples\)/);
      assert.ok(!/strength_reduction|write 0\.1f/.test(t), t.slice(0, 400));
    } finally {
      await closeHover();
    }
    await shot('vscode-after-quick-fix');
    await viewLine('acc += 0.1f').click();
    await waitFor('the fix undone', async () => {
      if ((await page.locator('.monaco-editor .view-line').filter({ hasText: '0.1f * row' }).count()) === 0) return true;
      await page.keyboard.press('Control+Z');
      return false;
    }, 10000, 300);
    await page.keyboard.press('Escape');
  });

  test('the CDP launch line shows what its children and the device runtime cost', async () => {
    await openFile('cdp.cu');
    // the cursor to the launch line with Go to Line: clicking the line's DOM node raced with Monaco
    // re-rendering it as the lens and inlay decorations of the newly opened file arrived (detached node)
    await page.keyboard.press('Control+G');
    await page.locator('.quick-input-widget input').fill(':22');
    await page.keyboard.press('Enter');
    const cursor = page.locator('.statusbar-item[id="status.editor.selection"]');
    await waitFor('the cursor on the launch line', async () => /Ln 22,/.test(await cursor.innerText()), 20000);
    const line = viewLine('scale_segment<<<');
    const hint = line.locator(INLAY).filter({ hasText: /children/ });
    await waitFor('the launch line inlay', async () => (await hint.count()) > 0).catch(async (e) => {
      await shot('cdp-inlay-missing');
      throw e;
    });
    assert.equal(norm(await hint.first().innerText()), 'children 73.7% · runtime 26.3%');
    const hover = await hoverOver(line.locator('span').filter({ hasText: /scale_segment/ }).first(), /device runtime/);
    try {
      assert.match(await hover.innerText(), /2,000 child launches against a pending-launch limit of 4,096, set at line 49/);
    } finally {
      await closeHover();
    }
    await openFile(`${EXAMPLE}.cu`);
  });

  test('a kernel launched three times is one kernel: one squiggle per line, shares summed, lens and hover say so', async () => {
    await openFile('bs_batches/orig.cu');
    const texts = await waitFor('the multi-launch lens', async () => {
      const t = (await lensTexts()).map(norm).filter(Boolean);
      return t.some((x) => /price_calls · 3 launches/.test(x)) ? t : false;
    });
    assert.match(texts.find((t) => /price_calls/.test(t)), /^warpwise: price_calls · 3 launches · report orig\.ncu-rep · 97,977 warp samples/);
    const hints = (await page.locator('.monaco-editor .view-lines').first().locator(INLAY).filter({ hasText: /%/ }).allInnerTexts()).map(norm);
    assert.ok(hints.length > 0);
    for (const h of hints) assert.ok(Number(/([\d.]+)%/.exec(h)[1]) <= 100, `inlay "${h}" above 100%`);
    await withProblems(async () => {
      const rows = await waitFor('rows for orig.cu', async () => {
        const r = await problemRows();
        return r.some((x) => /price_calls/.test(x.text)) ? r.filter((x) => /price_calls/.test(x.text)) : false;
      }, 20000);
      const perLine = new Map();
      for (const r of rows) perLine.set(r.line, (perLine.get(r.line) ?? 0) + 1);
      assert.deepEqual([...perLine.values()].filter((n) => n > 1), []);
    });
    const editor = await page.locator('.editor-group-container .monaco-editor').first().boundingBox();
    if (editor) await shot('vscode-multi-launch', { x: editor.x, y: editor.y, width: Math.min(editor.width, 1100), height: Math.min(editor.height, 560) }, 'vscode-multi-launch');
    const hover = await hoverOver(viewLine('sqrt_t = sqrtf(t)').locator('span').filter({ hasText: /sqrt_t/ }).first(), /Over 3 launches/);
    try {
      assert.match(norm(await hover.innerText()), /warpwise · price_calls · 3 launches · report orig\.ncu-rep/);
      const box = await hover.boundingBox();
      const pos = await hover.locator('text=/warp samples \\([\\d,]+ of [\\d,]+\\)/').first().boundingBox();
      if (box && pos) {
        await scrollHoverTo(hover, box);
        await shot('vscode-multi-launch-hover', clipAround(box, 12), 'vscode-multi-launch-hover');
      }
    } finally {
      await closeHover();
    }
    await openFile(`${EXAMPLE}.cu`);
  });

  test('a kernel launched 45 times: the lens counts the launches, the hover gives their range and the longest', async () => {
    await openFile('bitonic_segments/orig.cu');
    const texts = await waitFor('the 45-launch lens', async () => {
      const t = (await lensTexts()).map(norm).filter(Boolean);
      return t.some((x) => /bitonic_segments · 45 launches/.test(x)) ? t : false;
    }, 30000);
    assert.match(texts.find((t) => /bitonic_segments · 45/.test(t)), /^warpwise: bitonic_segments · 45 launches · report orig\.ncu-rep · 64,940 warp samples/);
    const hover = await hoverOver(viewLine('const bool up').locator('span').filter({ hasText: /up/ }).first(), /Over 45 launches/);
    try {
      const t = norm(await hover.innerText());
      // one line for all 45 launches: the range of the per-launch estimates and the longest launch, no per-launch list
      assert.match(t, /Per launch: 45 launches, \d\.\d{3}-\d\.\d{3}×; longest 0\.\d+ \d\.\d{3}× \(1\d\.\d us\)/);
      assert.ok(!/grid 16384×1×1 [\d.]+× \(/.test(t), 'a per-launch list in the hover');
      assert.ok(!/--format json/.test(t), 'a CLI flag in the hover');
      const box = await hover.boundingBox();
      if (box) {
        // scroll the hover (wheel over it) until the per-launch line is inside it, for the screenshot
        await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
        for (let i = 0; i < 20; i++) {
          const at = await hover.locator('text=/Per launch: 45 launches/').first().boundingBox();
          if (!at || at.y + at.height < box.y + box.height - 8) break;
          await page.mouse.wheel(0, 80);
          await page.waitForTimeout(150);
        }
        await shot('vscode-many-launch-hover', clipAround(box, 12));
      }
    } finally {
      await closeHover();
    }
    await openFile(`${EXAMPLE}.cu`);
  });

  test('the output channel stays quiet: no per-message logging with trace off, one server', async () => {
    const logs = findLogs(path.join(userData, 'logs')).filter((f) => /warpwise/i.test(path.basename(f)));
    const text = logs.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    assert.ok(!/INFO pygls/.test(text), 'pygls INFO lines in the output channel');
    assert.ok(!/already exists/.test(text), 'a second server registered the same commands');
    assert.equal((text.match(/starting .* lsp/g) ?? []).length, 1, 'exactly one server started');
    assert.equal(await page.locator('.notifications-toasts .notification-toast').filter({ hasText: /already exists/ }).count(), 0);
  });

  test('high contrast: the editor and the profile view stay readable (text contrast ≥ 4.5:1)', async () => {
    writeSettings(userSettings({ 'workbench.colorTheme': 'Default High Contrast' }));
    await waitFor('the high-contrast theme', async () => (await page.locator('.monaco-workbench.hc-black').count()) > 0, 30000);
    await openFile(`${EXAMPLE}.cu`);
    await page.locator('.monaco-editor .codelens-decoration a').filter({ hasText: /blur_rows/ }).first().click();
    const view = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
    await waitFor('the profile view page', async () => (await view.locator('#src-scroll .row').count()) > 0, 30000);
    await page.waitForTimeout(500);
    // contrast of every kind of text against what it is drawn on (WCAG 2 relative luminance)
    const report = await view.locator('body').evaluate((body) => {
      const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
      const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
        .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
      const bgOf = (e) => {
        for (let x = e; x; x = x.parentElement) {
          const c = rgb(getComputedStyle(x).backgroundColor);
          if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c;
        }
        return [255, 255, 255];
      };
      const out = [];
      for (const sel of ['.row .code', '.row .pct', '.row .ln', '.row.sel .code', '.row.sel .pct', '.row.sel .ln', '#sass .ins .txt', '#sass .ins .n', '#sass .ins .pc', '#sass h2', '.adv .name', '.adv .sub', 'header .meta', 'footer .lg']) {
        const e = document.querySelector(sel);
        if (!e) { out.push({ sel, ratio: 0, missing: true }); continue; }
        const a = lum(rgb(getComputedStyle(e).color)), b = lum(bgOf(e));
        out.push({ sel, ratio: Math.round(100 * (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) / 100 });
      }
      return { hc: body.classList.contains('vscode-high-contrast'), out };
    });
    console.log(`high contrast: ${JSON.stringify(report)}`);
    assert.ok(report.hc, 'the webview body has the vscode-high-contrast class');
    for (const r of report.out) assert.ok(r.ratio >= 4.5, `${r.sel}: contrast ${r.ratio}:1`);
    await shot('vscode-profile-view-hc', undefined, 'vscode-profile-view-hc');
    await page.locator('.tab').filter({ hasText: /warpwise: blur_rows/ }).first().click();
    await page.keyboard.press('Control+W');
    await openFile(`${EXAMPLE}.cu`);
    writeSettings(userSettings());
    await waitFor('the default theme again', async () => (await page.locator('.monaco-workbench.hc-black').count()) === 0, 30000);
  });

  test('warpwise.profiles globs are relative to the workspace folder: "advice/**" reads only that folder', async () => {
    writeSettings(userSettings({ 'warpwise.profiles': ['advice/**'] }));
    const item = page.locator('.statusbar-item').filter({ hasText: /warpwise/ });
    await waitFor('one profile loaded', async () => /warpwise: 1 profile · 1 kernel/.test(await item.first().innerText()), 30000);
    writeSettings(userSettings());
    await waitFor('all profiles again', async () => /5 profiles · 4 kernels/.test(await item.first().innerText()), 30000);
  });

  test('a wrong warpwise.server.path gives a notification with the install command', async () => {
    writeSettings(userSettings({ 'warpwise.server.path': '/nonexistent/warpwise' }));
    const toast = page.locator('.notifications-toasts .notification-toast').filter({ hasText: '/nonexistent/warpwise' });
    await waitFor('the "server not found" notification', async () => (await toast.count()) > 0, 30000);
    const text = await toast.first().innerText();
    assert.match(text, /warpwise\.server\.path is "\/nonexistent\/warpwise", which is not an executable file/);
    assert.match(text, /python3 -m venv \.venv && \.venv\/bin\/pip install -q -e \. — Run it in a clone of the warpwise repository/);
    assert.match(text, /Copy Install Command/);
    const item = page.locator('.statusbar-item').filter({ hasText: /server not found/ });
    await waitFor('the status-bar item to say "server not found"', async () => (await item.count()) > 0, 10000);
    await shot('vscode-server-missing-full');
    const box = await toast.first().boundingBox();
    if (box) await shot('vscode-server-missing', { x: 0, y: box.y - 8, width: VIEWPORT.width, height: VIEWPORT.height - box.y + 8 }, 'vscode-server-missing');
  });
});
