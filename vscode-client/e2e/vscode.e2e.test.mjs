// End-to-end test of the packaged extension in a real VS Code (code-server) driven by headless
// Chromium: install the .vsix, open an example .cu with its real profile, and check what a user sees —
// the squiggle, a hover with an estimated speedup, an inlay hint, a code lens, the status-bar item —
// then break warpwise.server.path and check the "server not found" notification.
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
const EXAMPLE = process.env.WARPWISE_E2E_EXAMPLE || 'gather';
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

function copyExample(ws) {
  const src = path.join(ROOT, 'examples', EXAMPLE);
  const dst = path.join(ws, 'examples', EXAMPLE);
  fs.mkdirSync(dst, { recursive: true });
  for (const f of fs.readdirSync(src)) {
    if (/\.(cu|cuh|ncu-rep|cubin)$/.test(f)) fs.copyFileSync(path.join(src, f), path.join(dst, f));
  }
  const common = path.join(ROOT, 'examples', 'common.cuh');
  if (fs.existsSync(common)) fs.copyFileSync(common, path.join(ws, 'examples', 'common.cuh'));
  const cu = path.join(dst, `${EXAMPLE}.cu`);
  assert.ok(fs.existsSync(cu), `example source ${cu} is missing`);
  assert.ok(fs.readdirSync(dst).some((f) => f.endsWith('.ncu-rep')), `example ${EXAMPLE} has no .ncu-rep`);
  return cu;
}

function userSettings(extra = {}) {
  return {
    'warpwise.server.path': SERVER,
    'warpwise.trace.server': 'messages',
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
  let tmp, userData, cuFile, codeServer, browser, page, port;
  const serverLog = [];
  const blocked = [];

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'warpwise-e2e-'));
    userData = path.join(tmp, 'user-data');
    const extDir = path.join(tmp, 'extensions');
    const ws = path.join(tmp, 'ws');
    fs.mkdirSync(ws);
    cuFile = copyExample(ws);
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

  async function openFile(name) {
    await page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } }).catch(() => undefined);
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 20000 });
    await input.fill(name);
    await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: 20000 });
    await page.keyboard.press('Enter');
    await page.locator(`.tab[aria-label*="${name}"]`).first().waitFor({ timeout: 20000 });
    await page.locator('.monaco-editor .view-lines').first().waitFor({ timeout: 20000 });
  }

  async function shot(name, clip) {
    const file = path.join(ARTIFACTS, `${name}.png`);
    await page.screenshot({ path: file, ...(clip ? { clip } : {}) });
    return file;
  }

  test('the example opens as CUDA C++', async () => {
    const mode = page.locator('.statusbar-item[id="status.editor.mode"]');
    await waitFor('the language mode CUDA C++', async () => /CUDA C\+\+/.test(await mode.innerText()), 30000);
  });

  test('a warpwise diagnostic is shown as a squiggle', async () => {
    const squiggle = page.locator(SQUIGGLE);
    await waitFor('a squiggle in the editor', async () => (await squiggle.count()) > 0);
    await shot('vscode-diagnostics');
    // the Problems panel lists it with source warpwise
    await page.keyboard.press('Control+Shift+M');
    const row = page.locator('.markers-panel .monaco-list-row').filter({ hasText: 'warpwise' });
    await waitFor('a warpwise row in the Problems panel', async () => (await row.count()) > 0, 20000);
    await shot('vscode-problems');
    await page.keyboard.press('Control+Shift+M'); // hide the panel again
  });

  test('an inlay hint at the end of a hot line shows share and speedup', async () => {
    // inlay hints are injected text: spans with a generated class inside the view lines
    const hint = page.locator('.monaco-editor .view-lines span[class*="dyn-rule"], .monaco-editor .view-lines span[class*="inlay"]').filter({ hasText: /%/ });
    await waitFor('an inlay hint like "23% · 1.14×"', async () => (await hint.count()) > 0);
    await shot('vscode-inlay-hints');
    const text = await hint.first().innerText();
    assert.match(text, /\d+(?:\.\d+)?\s?%/);
    assert.match(text, SPEEDUP, `the inlay hint "${text}" has no estimated speedup`);
  });

  test('a code lens on the profiled kernel', async () => {
    const lens = page.locator('.monaco-editor .codelens-decoration a, .monaco-editor .codelens-decoration span');
    await waitFor('a code lens', async () => {
      for (const t of await lens.allInnerTexts()) if (t.trim()) return true;
      return false;
    });
    const texts = (await lens.allInnerTexts()).map((t) => t.trim()).filter(Boolean);
    assert.ok(texts.length > 0);
    await shot('vscode-code-lens');
    // the editor with everything on it (for docs/img): squiggle, inlay hint, code lens
    const editor = await page.locator('.editor-group-container .monaco-editor').first().boundingBox();
    if (editor) await shot('vscode-editor', { x: editor.x, y: editor.y, width: Math.min(editor.width, 1000), height: Math.min(editor.height, 420) });
  });

  test('the hover over a hot line shows an estimated speedup', async () => {
    // the hottest line: the one that carries an inlay hint (else the first squiggle)
    const hinted = page.locator('.monaco-editor .view-line').filter({ has: page.locator(`span[class*="dyn-rule"], span[class*="inlay"]`, { hasText: /%/ }) }).first();
    const squiggle = (await hinted.count()) > 0 ? hinted.locator('span').first() : page.locator(SQUIGGLE).first();
    await squiggle.waitFor({ timeout: TIMEOUT_MS });
    const anyHover = page.locator('.monaco-hover:not(.hidden)');
    const hover = anyHover.filter({ hasText: SPEEDUP });
    try {
      await waitFor('a hover with an estimated speedup (like 1.14×)', async () => {
        const box = await squiggle.boundingBox();
        if (!box) return false;
        await page.mouse.move(box.x + 2, box.y + box.height / 2);
        await page.mouse.move(box.x + Math.min(box.width / 2, 60), box.y + box.height / 2);
        await page.waitForTimeout(800);
        return (await hover.count()) > 0;
      }, 30000, 200);
      assert.match(await hover.first().innerText(), SPEEDUP);
    } finally {
      const box = (await anyHover.count()) > 0 ? await anyHover.first().boundingBox() : null;
      await shot('vscode-hover', box ? clipAround(box, 12) : undefined);
      await page.mouse.move(5, 5);
      await page.keyboard.press('Escape');
      await page.waitForTimeout(300);
    }
  });

  test('the status bar shows the loaded profiles and kernels', async () => {
    const item = page.locator('.statusbar-item').filter({ hasText: /warpwise/ });
    await waitFor('the warpwise status-bar item with counts', async () => /\d+ profiles? · \d+ kernels?/.test(await item.first().innerText()));
    const box = await item.first().boundingBox();
    await shot('vscode-status-bar', box ? { x: Math.max(0, box.x - 10), y: box.y - 4, width: Math.min(420, 1280 - box.x + 10), height: box.height + 8 } : undefined);
  });

  test('clicking the code lens opens the text report in a read-only editor', async () => {
    const lens = page.locator('.monaco-editor .codelens-decoration a').filter({ hasText: /report/i }).first();
    await lens.waitFor({ timeout: 20000 });
    await lens.click();
    const tab = page.locator('.tab').filter({ hasText: /warpwise report/ });
    await waitFor('the report tab', async () => (await tab.count()) > 0, 20000);
    const editor = page.locator('.editor-group-container').filter({ has: page.locator('.tab.active', { hasText: /warpwise report/ }) });
    // the report names a kernel defined in the example's source
    const kernels = [...fs.readFileSync(cuFile, 'utf8').matchAll(/__global__\s+void\s+(\w+)/g)].map((m) => m[1]);
    assert.ok(kernels.length > 0);
    await waitFor(`report text naming one of ${kernels.join(', ')}`, async () => {
      const text = await editor.locator('.view-lines').first().innerText();
      return kernels.some((k) => text.includes(k));
    }, 20000);
    await shot('vscode-report-full');
    const group = await editor.first().boundingBox();
    if (group) await shot('vscode-report', clipAround({ ...group, height: Math.min(group.height, 420) }, 0));
  });

  test('a wrong warpwise.server.path gives a notification with the install command', async () => {
    writeSettings(userSettings({ 'warpwise.server.path': '/nonexistent/warpwise' }));
    const toast = page.locator('.notifications-toasts .notification-toast').filter({ hasText: '/nonexistent/warpwise' });
    await waitFor('the "server not found" notification', async () => (await toast.count()) > 0, 30000);
    const text = await toast.first().innerText();
    assert.match(text, /warpwise\.server\.path is "\/nonexistent\/warpwise", which is not an executable file/);
    assert.match(text, /pip install warpwise/);
    assert.match(text, /Copy Install Command/);
    const item = page.locator('.statusbar-item').filter({ hasText: /server not found/ });
    await waitFor('the status-bar item to say "server not found"', async () => (await item.count()) > 0, 10000);
    await shot('vscode-server-missing-full');
    const box = await toast.first().boundingBox();
    // the notification and the status bar below it
    if (box) await shot('vscode-server-missing', { x: 0, y: box.y - 8, width: VIEWPORT.width, height: VIEWPORT.height - box.y + 8 });
  });
});
