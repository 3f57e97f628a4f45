import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseStatusParams, reportsView, statusView } from '../src/status';

test('warpwise/status notifications are validated', () => {
  assert.deepEqual(parseStatusParams({ profiles: 2, kernels: 3, message: 'loaded' }), { profiles: 2, kernels: 3, message: 'loaded', choices: 0 });
  assert.deepEqual(parseStatusParams({ profiles: 1, kernels: 0 }), { profiles: 1, kernels: 0, message: '', choices: 0 });
  assert.equal(parseStatusParams({ profiles: -1, kernels: 0, message: '' }), undefined);
  assert.equal(parseStatusParams({ profiles: '2', kernels: 3 }), undefined);
  assert.equal(parseStatusParams(null), undefined);
  assert.equal(parseStatusParams([1, 2]), undefined);
});

test('running: profile and kernel counts with singular/plural', () => {
  assert.equal(statusView({ kind: 'running', status: { profiles: 2, kernels: 5, message: '', choices: 0 } }).text, '$(pulse) warpwise: 2 profiles · 5 kernels');
  assert.equal(statusView({ kind: 'running', status: { profiles: 1, kernels: 1, message: '', choices: 0 } }).text, '$(pulse) warpwise: 1 profile · 1 kernel');
  assert.equal(statusView({ kind: 'running', status: { profiles: 0, kernels: 0, message: '', choices: 0 } }).text, '$(pulse) warpwise: no profile');
  const v = statusView({ kind: 'running', status: { profiles: 1, kernels: 2, message: 'relax.ncu-rep: 2 kernels', choices: 0 } });
  assert.match(v.tooltip, /relax\.ncu-rep: 2 kernels/);
  assert.equal(v.command, 'warpwise.showReport');
  assert.equal(v.background, undefined);
});

test('missing and failed servers are visible and clickable', () => {
  const missing = statusView({ kind: 'missing', reason: 'No warpwise on PATH.' });
  assert.equal(missing.text, '$(warning) warpwise: server not found');
  assert.match(missing.tooltip, /No warpwise on PATH\./);
  assert.equal(missing.background, 'statusBarItem.warningBackground');
  assert.equal(missing.command, 'warpwise.restartServer');
  const failed = statusView({ kind: 'failed', reason: 'exit code 1' });
  assert.equal(failed.background, 'statusBarItem.errorBackground');
  assert.equal(failed.command, 'warpwise.showOutput');
  assert.equal(statusView({ kind: 'starting' }).text, '$(sync~spin) warpwise');
});

test('the report picker item appears only when a kernel is in several reports', () => {
  assert.deepEqual(parseStatusParams({ profiles: 2, kernels: 1, message: '', choices: 1 })?.choices, 1);
  assert.equal(reportsView({ profiles: 2, kernels: 1, message: '', choices: 0 }), undefined);
  assert.equal(reportsView(undefined), undefined);
  const v = reportsView({ profiles: 2, kernels: 1, message: '', choices: 1 });
  assert.equal(v?.text, '$(versions) 1 kernel in several reports');
  assert.equal(v?.command, 'warpwise.chooseReport');
});
