import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeEach, test } from 'node:test';
import { executeCommandMiddleware, prepareArgs, ReportDocuments, REPORT_SCHEME, SERVER_COMMANDS, type CommandContext } from '../src/commands';
import { DEFAULTS, type WarpwiseSettings } from '../src/settings';
import * as fake from './fakeVscode/index';

const CU = 'file:///ws/examples/relax/relax.cu';

function context(over: Partial<CommandContext> & { profileCommand?: string[] } = {}): CommandContext & { asked: string[] } {
  const asked: string[] = [];
  const settings: WarpwiseSettings = { ...DEFAULTS, profile: { ...DEFAULTS.profile, command: over.profileCommand ?? [] } };
  return {
    asked,
    activeCudaUri: over.activeCudaUri ?? (() => CU),
    settings: () => settings,
    askKernel: over.askKernel ?? (async (uri) => {
      asked.push(uri);
      return 'relax';
    }),
  };
}

beforeEach(() => fake.reset());

test('the manifest contributes every server command plus restart/output/profile view/report picker, and activates on CUDA', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const ids: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command);
  assert.deepEqual(ids.sort(), [...SERVER_COMMANDS, 'warpwise.restartServer', 'warpwise.showOutput', 'warpwise.showProfileView', 'warpwise.chooseReport'].sort());
  assert.ok(manifest.activationEvents.includes('onLanguage:cuda-cpp'));
  const cuda = manifest.contributes.languages.find((l: { id: string }) => l.id === 'cuda-cpp');
  assert.deepEqual(cuda.extensions, ['.cu', '.cuh']);
  assert.equal(manifest.main, './dist/extension.js');
});

test('showReport: explicit uri kept; from the palette the active CUDA file is used', async () => {
  assert.deepEqual(await prepareArgs('warpwise.showReport', ['file:///x.cu'], context()), ['file:///x.cu']);
  assert.deepEqual(await prepareArgs('warpwise.showReport', [], context()), [CU]);
  assert.deepEqual(await prepareArgs('warpwise.showReport', [], context({ activeCudaUri: () => undefined })), []);
});

test('profile without warpwise.profile.command does not reach the server and says what to set', async () => {
  fake.answers.showWarningMessage = 'Open Settings';
  assert.equal(await prepareArgs('warpwise.profile', [], context()), undefined);
  const [warn] = fake.callsTo('window.showWarningMessage');
  assert.match(warn.args[0] as string, /warpwise\.profile\.command/);
  assert.deepEqual(fake.callsTo('commands.executeCommand')[0].args, ['workbench.action.openSettings', 'warpwise.profile']);
  assert.deepEqual(await prepareArgs('warpwise.profile', [], context({ profileCommand: ['./relax'] })), []);
});

test('tuneSchedule: complete args pass, a missing kernel is asked for, no file is an error', async () => {
  const full = [{ uri: 'file:///a.cu', kernel: 'k' }];
  assert.equal(await prepareArgs('warpwise.tuneSchedule', full, context()), full);
  const ctx = context();
  assert.deepEqual(await prepareArgs('warpwise.tuneSchedule', [], ctx), [{ uri: CU, kernel: 'relax' }]);
  assert.deepEqual(ctx.asked, [CU]);
  assert.deepEqual(await prepareArgs('warpwise.tuneSchedule', [{ uri: 'file:///b.cu' }], context()), [{ uri: 'file:///b.cu', kernel: 'relax' }]);
  assert.equal(await prepareArgs('warpwise.tuneSchedule', [], context({ askKernel: async () => undefined })), undefined);
  assert.equal(await prepareArgs('warpwise.tuneSchedule', [], context({ activeCudaUri: () => undefined })), undefined);
  assert.match(fake.callsTo('window.showErrorMessage')[0].args[0] as string, /open the CUDA file/);
});

test('middleware: showReport sends the prepared args and opens the returned text read-only', async () => {
  const reports = new ReportDocuments();
  fake.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, reports);
  const sent: unknown[][] = [];
  const mw = executeCommandMiddleware(context(), reports);
  const result = await mw('warpwise.showReport', [], (command, args) => {
    sent.push([command, ...args]);
    return Promise.resolve('kernel relax: 1.14× from global_memory_coalesce');
  });
  assert.equal(result, 'kernel relax: 1.14× from global_memory_coalesce');
  assert.deepEqual(sent, [['warpwise.showReport', CU]]);
  const [shown] = fake.callsTo('window.showTextDocument');
  const doc = shown.args[0] as { uri: { scheme: string; path: string }; getText(): string };
  assert.equal(doc.uri.scheme, REPORT_SCHEME);
  assert.equal(doc.uri.path, '/warpwise report - relax.cu.txt');
  assert.equal(doc.getText(), 'kernel relax: 1.14× from global_memory_coalesce');
});

test('middleware: a cancelled command never reaches the server; other results are shown as messages', async () => {
  const reports = new ReportDocuments();
  let called = 0;
  const mw = executeCommandMiddleware(context(), reports);
  assert.equal(await mw('warpwise.profile', [], () => called++), undefined);
  assert.equal(called, 0);
  await mw('warpwise.reloadProfiles', [], () => Promise.resolve('2 profiles, 3 kernels'));
  assert.deepEqual(fake.callsTo('window.showInformationMessage').map((c) => c.args[0]), ['warpwise: 2 profiles, 3 kernels']);
});

test('the profile view page is filled in one pass and a reveal message is validated', async () => {
  const { fillPage, parseReveal } = await import('../src/profileView');
  const page = fillPage('<title>WARPWISE_TITLE</title><style>/*WARPWISE_CSS*/</style><script>/*WARPWISE_JS*/</script><script type="application/json">WARPWISE_DATA</script>',
    'body{}', 'run("</script>")', { kernels: [{ name: '</script>/*WARPWISE_CSS*/' }] }, 'a<b');
  assert.ok(page.includes('<title>a&lt;b</title>'));
  assert.ok(page.includes('run("<\\/script>")'));
  assert.ok(!page.includes('"</script>'));
  assert.equal(page.split('body{}').length, 2); // the data's placeholder-like text was not replaced
  assert.deepEqual(parseReveal({ type: 'reveal', file: '/w/k.cu', line: 18 }), { file: '/w/k.cu', line: 18 });
  assert.equal(parseReveal({ type: 'reveal', file: '/w/k.cu', line: 0 }), undefined);
  assert.equal(parseReveal({ type: 'other' }), undefined);
});

test('reveal goes to the line where the profiled line is now (the server\'s warpwise.currentLine)', async () => {
  const { currentLine } = await import('../src/profileView');
  assert.equal(currentLine({ line: 20, stale: false }, 18), 20);
  assert.equal(currentLine({ line: 22, stale: true }, 20), 22);
  assert.equal(currentLine({ line: null, stale: false, error: 'x' }, 18), 18);
  assert.equal(currentLine(undefined, 18), 18);
});

test('report picker items: active marked, newest labelled', async () => {
  const { parseReports, reportItems } = await import('../src/reports');
  const [k] = parseReports([{ kernel: '_Z1kv', name: 'k', active: '/r/old.ncu-rep', reports: [
    { path: '/r/new.ncu-rep', launches: 3, samples: 1200 }, { path: '/r/old.ncu-rep', launches: 1, samples: 400 }] }, { bad: 1 }]);
  const items = reportItems(k);
  assert.deepEqual(items.map((i) => i.label), ['new.ncu-rep', '$(check) old.ncu-rep']);
  assert.equal(items[0].description, '3 launches · 1,200 warp samples · newest');
});
