import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { answerConfiguration, DEFAULTS, lookup, needsRestart, readSettings, type WarpwiseSettings } from '../src/settings';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
const properties: Record<string, { default: unknown }> = manifest.contributes.configuration.properties;

function reader(values: Record<string, unknown>) {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

test('every setting in package.json has the same default as DEFAULTS, and vice versa', () => {
  const keys = Object.keys(properties).map((k) => k.replace(/^warpwise\./, ''));
  for (const key of keys) {
    assert.deepEqual(lookup(DEFAULTS, key), properties[`warpwise.${key}`].default, key);
  }
  // the server contract's settings, all present in the manifest
  for (const key of [
    'server.path', 'server.python', 'profiles', 'binaries', 'minShare', 'maxDiagnosticsPerFile', 'severity',
    'inlayHints.enabled', 'ncuPath', 'profile.command', 'profile.output', 'tune.iterations', 'tune.seed',
    'tune.verifySamples', 'trace.server', 'minGain', 'logLevel',
  ]) {
    assert.ok(keys.includes(key), `package.json lacks warpwise.${key}`);
  }
});

test('unset settings read as the defaults, with no problems', () => {
  const { settings, problems } = readSettings(reader({}));
  assert.deepEqual(settings, DEFAULTS);
  assert.deepEqual(problems, []);
});

test('valid values are kept', () => {
  const { settings, problems } = readSettings(
    reader({
      'server.path': '  /opt/ww/bin/warpwise ',
      minShare: 0.1,
      maxDiagnosticsPerFile: 5,
      severity: { hotLine: 'warning', global_memory_coalesce: 'error' },
      'profile.command': ['./relax', '--n', '64'],
      'tune.seed': 3,
      'trace.server': 'verbose',
      'inlayHints.enabled': false,
    }),
  );
  assert.deepEqual(problems, []);
  assert.equal(settings.server.path, '/opt/ww/bin/warpwise');
  assert.equal(settings.minShare, 0.1);
  assert.equal(settings.maxDiagnosticsPerFile, 5);
  assert.deepEqual(settings.severity, { hotLine: 'warning', global_memory_coalesce: 'error' });
  assert.deepEqual(settings.profile.command, ['./relax', '--n', '64']);
  assert.equal(settings.tune.seed, 3);
  assert.equal(settings.trace.server, 'verbose');
  assert.equal(settings.inlayHints.enabled, false);
});

test('invalid values fall back to their defaults and are reported by key', () => {
  const { settings, problems } = readSettings(
    reader({
      minShare: 2,
      maxDiagnosticsPerFile: 2.5,
      profiles: '**/*.ncu-rep',
      severity: { hotLine: 'loud', fast_math: 'hint' },
      'tune.iterations': 0,
      'tune.seed': -1,
    }),
  );
  assert.equal(settings.minShare, 0.02);
  assert.equal(settings.maxDiagnosticsPerFile, 20);
  assert.deepEqual(settings.profiles, ['**/*.ncu-rep', '**/*.source.csv']);
  assert.deepEqual(settings.severity, { fast_math: 'hint' });
  assert.equal(settings.tune.iterations, 200);
  assert.equal(settings.tune.seed, 0);
  assert.equal(problems.length, 6);
  for (const key of ['warpwise.minShare', 'warpwise.maxDiagnosticsPerFile', 'warpwise.profiles', 'warpwise.severity.hotLine', 'warpwise.tune.iterations', 'warpwise.tune.seed']) {
    assert.ok(problems.some((p) => p.startsWith(key)), `no problem reported for ${key}: ${problems.join(' | ')}`);
  }
});

test('workspace/configuration: warpwise sections get validated settings of their scope, others pass through', () => {
  const scopes: (string | undefined)[] = [];
  const settingsFor = (scope: string | undefined): WarpwiseSettings => {
    scopes.push(scope);
    return readSettings(reader(scope === 'file:///a/k.cu' ? { minShare: 0.5 } : { minShare: 7 })).settings;
  };
  const answers = answerConfiguration(
    [
      { section: 'warpwise', scopeUri: 'file:///a/k.cu' },
      { section: 'warpwise.tune' },
      { section: 'warpwise.minShare' },
      { section: 'editor.tabSize' },
      { section: 'warpwise.noSuchKey' },
    ],
    [{ raw: true }, { raw: true }, 7, 4, 'editor-value'],
    settingsFor,
  );
  assert.equal((answers[0] as WarpwiseSettings).minShare, 0.5);
  assert.equal((answers[0] as WarpwiseSettings).server.path, '');
  assert.deepEqual(answers[1], { iterations: 200, seed: 0, verifySamples: 10000 });
  assert.equal(answers[2], 0.02, 'out-of-range minShare is replaced by the default');
  assert.equal(answers[3], 4);
  assert.equal(answers[4], 'editor-value');
  assert.deepEqual(scopes, ['file:///a/k.cu', undefined, undefined, undefined]);
});

test('only server.path / server.python changes need a new server process', () => {
  assert.equal(needsRestart((s) => s === 'warpwise.server.python'), true);
  assert.equal(needsRestart((s) => s === 'warpwise.server.path'), true);
  assert.equal(needsRestart((s) => s === 'warpwise.minShare'), false);
});
