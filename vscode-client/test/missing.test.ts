import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { COPY_INSTALL, missingServerMessage, notifyMissingServer, OPEN_SETTINGS, SHOW_OUTPUT } from '../src/missing';
import { resolveServer, type ServerMissing } from '../src/serverCommand';
import * as fake from './fakeVscode/index';

const missing = resolveServer(
  { path: '', python: '' },
  { platform: 'linux', pathEnv: '/usr/bin', home: '/h', workspaceFolders: [], trusted: true, isExecutable: () => false },
) as ServerMissing;

beforeEach(() => fake.reset());

test('the notification says why and gives the install command', () => {
  const msg = missingServerMessage(missing);
  assert.match(msg, /not found/);
  // warpwise is not on PyPI: the README's install from a clone, and where the server then is
  assert.ok(msg.includes('Install it with: python3 -m venv .venv && .venv/bin/pip install -q -e . — Run it in a clone of the warpwise repository'), msg);
  assert.ok(msg.includes('set warpwise.server.path to <clone>/.venv/bin/warpwise'), msg);
  assert.doesNotMatch(msg, /pip install warpwise/);
  assert.match(msg, /warpwise\.server\.path/);
});

test('"Copy Install Command" puts the command on the clipboard', async () => {
  fake.answers.showErrorMessage = COPY_INSTALL;
  assert.equal(await notifyMissingServer(missing), COPY_INSTALL);
  const [shown] = fake.callsTo('window.showErrorMessage');
  assert.deepEqual(shown.args.slice(1), [COPY_INSTALL, OPEN_SETTINGS, SHOW_OUTPUT]);
  assert.equal(fake.env.clipboard.text, 'python3 -m venv .venv && .venv/bin/pip install -q -e .');
  const [info] = fake.callsTo('window.showInformationMessage');
  assert.match(info.args[0] as string, /^Copied: python3 -m venv .* — Run it in a clone of the warpwise repository/);
});

test('"Open Settings" opens the warpwise.server settings', async () => {
  fake.answers.showErrorMessage = OPEN_SETTINGS;
  await notifyMissingServer(missing);
  assert.deepEqual(fake.callsTo('commands.executeCommand').map((c) => c.args), [['workbench.action.openSettings', 'warpwise.server']]);
  assert.equal(fake.env.clipboard.text, '');
});

test('"Show Output" shows the output channel; dismissing does nothing', async () => {
  let shown = 0;
  fake.answers.showErrorMessage = SHOW_OUTPUT;
  await notifyMissingServer(missing, { show: () => shown++ });
  assert.equal(shown, 1);
  fake.answers.showErrorMessage = undefined;
  assert.equal(await notifyMissingServer(missing, { show: () => shown++ }), undefined);
  assert.equal(shown, 1);
  assert.equal(fake.callsTo('commands.executeCommand').length, 0);
});
