import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { isExecutableFile } from '../src/machine';
import { checkPython, expandPath, findExecutable, resolveServer, type MachineEnv, type ServerCommand } from '../src/serverCommand';

function env(executables: string[], extra: Partial<MachineEnv> = {}): MachineEnv {
  const set = new Set(executables);
  return {
    platform: 'linux',
    pathEnv: '/usr/local/bin:/usr/bin',
    home: '/home/u',
    workspaceFolders: ['/ws/proj'],
    trusted: true,
    isExecutable: (p) => set.has(p),
    ...extra,
  };
}

test('warpwise.server.path wins and is started with "lsp"', () => {
  const r = resolveServer({ path: '/opt/ww/bin/warpwise', python: '/usr/bin/python3' }, env(['/opt/ww/bin/warpwise', '/usr/bin/python3', '/usr/bin/warpwise']));
  assert.deepEqual(r, { ok: true, command: '/opt/ww/bin/warpwise', args: ['lsp'], source: 'server.path' });
});

test('server.path expands ${workspaceFolder}, ~ and bare names on PATH', () => {
  const e = env(['/ws/proj/.venv/bin/warpwise', '/home/u/bin/warpwise', '/usr/bin/ww']);
  assert.equal(expandPath('${workspaceFolder}/.venv/bin/warpwise', e), '/ws/proj/.venv/bin/warpwise');
  assert.equal((resolveServer({ path: '${workspaceFolder}/.venv/bin/warpwise', python: '' }, e) as ServerCommand).command, '/ws/proj/.venv/bin/warpwise');
  assert.equal((resolveServer({ path: '~/bin/warpwise', python: '' }, e) as ServerCommand).command, '/home/u/bin/warpwise');
  assert.equal((resolveServer({ path: 'ww', python: '' }, e) as ServerCommand).command, '/usr/bin/ww');
  // a relative path with a directory part is taken from the workspace folder
  assert.equal((resolveServer({ path: '.venv/bin/warpwise', python: '' }, e) as ServerCommand).command, '/ws/proj/.venv/bin/warpwise');
});

test('a server.path that is not executable is a failure naming the setting, not a silent fallback', () => {
  const r = resolveServer({ path: '/nope/warpwise', python: '' }, env(['/usr/bin/warpwise']));
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.match(r.reason, /warpwise\.server\.path is "\/nope\/warpwise"/);
  assert.equal(r.installCommand, 'python3 -m venv .venv && .venv/bin/pip install -q -e .');
  assert.deepEqual(r.tried, ['/nope/warpwise']);
});

test('server.python runs the CLI module of that interpreter', () => {
  const r = resolveServer({ path: '', python: '/ws/proj/.venv/bin/python' }, env(['/ws/proj/.venv/bin/python']));
  assert.deepEqual(r, {
    ok: true,
    command: '/ws/proj/.venv/bin/python',
    args: ['-m', 'warpwise.server.cli', 'lsp'],
    source: 'server.python',
    python: '/ws/proj/.venv/bin/python',
  });
});

test('with no settings: PATH first, in PATH order', () => {
  const r = resolveServer({ path: '', python: '' }, env(['/usr/bin/warpwise', '/usr/local/bin/warpwise', '/ws/proj/.venv/bin/warpwise']));
  assert.deepEqual(r, { ok: true, command: '/usr/local/bin/warpwise', args: ['lsp'], source: 'PATH' });
});

test("then the trusted workspace's own venv, never an untrusted one's", () => {
  const exe = '/ws/proj/.venv/bin/warpwise';
  assert.deepEqual(resolveServer({ path: '', python: '' }, env([exe])), { ok: true, command: exe, args: ['lsp'], source: 'workspace venv' });
  const r = resolveServer({ path: '', python: '' }, env([exe], { trusted: false }));
  assert.equal(r.ok, false);
});

test('nothing found: the reason says what was looked at and how to install', () => {
  const r = resolveServer({ path: '', python: '' }, env([]));
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.match(r.reason, /not found/);
  assert.equal(r.installCommand, 'python3 -m venv .venv && .venv/bin/pip install -q -e .');
  assert.deepEqual(r.tried, ['warpwise on PATH', '/ws/proj/.venv/bin/warpwise', '/ws/proj/venv/bin/warpwise']);
});

test('Windows: PATH is ;-separated and PATHEXT is tried', () => {
  const e = env(['C:\\Py\\Scripts\\warpwise.EXE'], { platform: 'win32', pathEnv: 'C:\\Windows;C:\\Py\\Scripts', pathExt: '.COM;.EXE' });
  assert.equal(findExecutable('warpwise', e), 'C:\\Py\\Scripts\\warpwise.EXE');
  const missing = resolveServer({ path: '', python: '' }, env([], { platform: 'win32', pathEnv: '' }));
  assert.equal(missing.ok ? '' : missing.installCommand, 'py -m venv .venv && .venv\\Scripts\\pip install -q -e .');
  assert.match(missing.ok ? '' : missing.afterInstall, /<clone>\/\.venv\\Scripts\\warpwise\.exe/);
});

test('an interpreter without warpwise becomes "missing" with an install command for that interpreter', async () => {
  const resolved = resolveServer({ path: '', python: '/opt/py 3/bin/python' }, env(['/opt/py 3/bin/python'])) as ServerCommand;
  const seen: string[][] = [];
  const r = await checkPython(resolved, async (cmd, args) => {
    seen.push([cmd, ...args]);
    return { code: 1, stderr: "Traceback (most recent call last):\nModuleNotFoundError: No module named 'warpwise'\n" };
  }, { platform: 'linux' });
  assert.deepEqual(seen, [['/opt/py 3/bin/python', '-c', 'import warpwise.server.cli']]);
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.equal(r.installCommand, '"/opt/py 3/bin/python" -m pip install -q -e .');
  assert.equal(r.afterInstall, 'Run it in a clone of the warpwise repository (warpwise is not on PyPI), then run "warpwise: Restart Language Server".');
  assert.match(r.reason, /No module named 'warpwise'/);
  const fine = await checkPython(resolved, async () => ({ code: 0, stderr: '' }), { platform: 'linux' });
  assert.equal(fine, resolved);
});

test('isExecutableFile on the real file system: executable file yes; plain file, folder, absent no', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ww-exe-'));
  try {
    const exe = path.join(dir, 'warpwise');
    fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
    const plain = path.join(dir, 'notes.txt');
    fs.writeFileSync(plain, 'x', { mode: 0o644 });
    assert.equal(isExecutableFile(exe), true);
    assert.equal(isExecutableFile(plain), os.platform() === 'win32');
    assert.equal(isExecutableFile(dir), false);
    assert.equal(isExecutableFile(path.join(dir, 'absent')), false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
