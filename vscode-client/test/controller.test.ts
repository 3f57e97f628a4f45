import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { CLIENT_STATE, Controller, type ClientLike, type ControllerDeps } from '../src/controller';
import { SERVER_COMMANDS } from '../src/commands';
import type { MachineEnv, ServerCommand } from '../src/serverCommand';
import * as fake from './fakeVscode/index';

/** A language client that records what the controller does with it (the LSP side is not under test). */
class FakeClient implements ClientLike {
  started = 0;
  stopped = 0;
  private stateListeners: ((e: { oldState: number; newState: number }) => void)[] = [];
  readonly notificationHandlers = new Map<string, (params: unknown) => void>();
  initializeResult: ClientLike['initializeResult'];
  constructor(private readonly advertised: string[], private readonly failStart?: Error) {}
  onDidChangeState(l: (e: { oldState: number; newState: number }) => void): void {
    this.stateListeners.push(l);
  }
  onNotification(method: string, handler: (params: unknown) => void): void {
    this.notificationHandlers.set(method, handler);
  }
  async start(): Promise<void> {
    this.started++;
    if (this.failStart) throw this.failStart;
    this.initializeResult = { capabilities: { executeCommandProvider: { commands: this.advertised } } };
    for (const l of this.stateListeners) l({ oldState: CLIENT_STATE.Starting, newState: CLIENT_STATE.Running });
  }
  async stop(): Promise<void> {
    this.stopped++;
  }
  notify(method: string, params: unknown): void {
    this.notificationHandlers.get(method)?.(params);
  }
}

function deps(executables: string[], clients: FakeClient[], made: ServerCommand[], importOk = true): ControllerDeps {
  return {
    createClient: (server) => {
      made.push(server);
      const c = clients.shift();
      if (!c) throw new Error('no more fake clients');
      return { client: c, watchers: [] };
    },
    machineEnv: (workspaceFolders: string[], trusted: boolean): MachineEnv => ({
      platform: 'linux',
      pathEnv: '/usr/bin',
      home: '/home/u',
      workspaceFolders,
      trusted,
      isExecutable: (p) => executables.includes(p),
    }),
    runProcess: async () => (importOk ? { code: 0, stderr: '' } : { code: 1, stderr: "ModuleNotFoundError: No module named 'warpwise'" }),
  };
}

beforeEach(() => fake.reset());

test('server found: started with "lsp", status follows warpwise/status, malformed ones are ignored', async () => {
  const client = new FakeClient([...SERVER_COMMANDS]);
  const made: ServerCommand[] = [];
  fake.setConfiguration({ 'warpwise.server.path': '/opt/ww/bin/warpwise' });
  const c = new Controller(deps(['/opt/ww/bin/warpwise'], [client], made));
  await c.start();
  assert.deepEqual(made.map((m) => [m.command, ...m.args]), [['/opt/ww/bin/warpwise', 'lsp']]);
  const [item] = fake.statusBarItems;
  assert.equal(item.text, '$(pulse) warpwise');
  client.notify('warpwise/status', { profiles: 2, kernels: 3, message: 'gather.ncu-rep, stencil.ncu-rep' });
  assert.equal(item.text, '$(pulse) warpwise: 2 profiles · 3 kernels');
  assert.equal(item.command, 'warpwise.showReport');
  client.notify('warpwise/status', { profiles: 'two' });
  assert.equal(item.text, '$(pulse) warpwise: 2 profiles · 3 kernels');
  assert.ok(fake.outputChannels[0].lines.some((l) => l.includes('malformed warpwise/status')));
  // the client registers the advertised commands itself: no stand-ins, no clash
  assert.deepEqual(fake.registeredCommandIds(), ['warpwise.chooseReport', 'warpwise.restartServer', 'warpwise.showOutput', 'warpwise.showProfileView']);
  c.dispose();
});

test('server missing: notification, status item, and every server command explains instead of failing', async () => {
  const c = new Controller(deps([], [], []));
  await c.start();
  assert.equal(c.state.kind, 'missing');
  assert.equal(fake.statusBarItems[0].text, '$(warning) warpwise: server not found');
  const [note] = fake.callsTo('window.showErrorMessage');
  assert.match(note.args[0] as string, /python3 -m venv \.venv && \.venv\/bin\/pip install -q -e \./);
  assert.deepEqual(fake.registeredCommandIds(), [...SERVER_COMMANDS, 'warpwise.restartServer', 'warpwise.showOutput', 'warpwise.showProfileView', 'warpwise.chooseReport'].sort());
  await fake.commands.executeCommand('warpwise.showReport');
  assert.equal(fake.callsTo('window.showErrorMessage').length, 2);
  c.dispose();
});

test('an interpreter without warpwise is reported with an install command for that interpreter', async () => {
  fake.setConfiguration({ 'warpwise.server.python': '/ws/.venv/bin/python' });
  const made: ServerCommand[] = [];
  const c = new Controller(deps(['/ws/.venv/bin/python'], [new FakeClient([])], made, false));
  await c.start();
  assert.equal(made.length, 0, 'no server process is started');
  assert.match(fake.callsTo('window.showErrorMessage')[0].args[0] as string, /\/ws\/\.venv\/bin\/python -m pip install -q -e \. — Run it in a clone/);
  c.dispose();
});

test('commands the server does not advertise get a stand-in that says so', async () => {
  const client = new FakeClient(['warpwise.showReport', 'warpwise.reloadProfiles', 'warpwise.profile']);
  fake.setConfiguration({ 'warpwise.server.path': '/opt/ww/bin/warpwise' });
  const c = new Controller(deps(['/opt/ww/bin/warpwise'], [client], []));
  await c.start();
  assert.deepEqual(fake.registeredCommandIds(), ['warpwise.chooseReport', 'warpwise.restartServer', 'warpwise.showOutput', 'warpwise.showProfileView', 'warpwise.tuneSchedule']);
  await fake.commands.executeCommand('warpwise.tuneSchedule');
  assert.match(fake.callsTo('window.showWarningMessage')[0].args[0] as string, /does not provide warpwise\.tuneSchedule/);
  c.dispose();
});

test('a server that fails to start shows the error; changing warpwise.server.path restarts', async () => {
  const broken = new FakeClient([], new Error('exit code 2'));
  const good = new FakeClient([...SERVER_COMMANDS]);
  const made: ServerCommand[] = [];
  fake.setConfiguration({ 'warpwise.server.path': '/old/warpwise' });
  const c = new Controller(deps(['/old/warpwise', '/new/warpwise'], [broken, good], made));
  await c.start();
  assert.equal(c.state.kind, 'failed');
  assert.equal(fake.statusBarItems[0].text, '$(error) warpwise: server failed');
  assert.match(fake.callsTo('window.showErrorMessage')[0].args[0] as string, /did not start: exit code 2/);
  fake.changeConfiguration({ 'warpwise.minShare': 0.1 });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(made.length, 1, 'a plain setting change does not restart the server');
  fake.changeConfiguration({ 'warpwise.server.path': '/new/warpwise' });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(broken.stopped, 1);
  assert.deepEqual(made.map((m) => m.command), ['/old/warpwise', '/new/warpwise']);
  assert.equal(c.state.kind, 'running');
  c.dispose();
});

test('granting trust that unlocks warpwise.server.path (with a .venv present) starts one server, not two', async () => {
  const client = new FakeClient([...SERVER_COMMANDS]);
  const spare = new FakeClient([...SERVER_COMMANDS]);
  const made: ServerCommand[] = [];
  fake.workspace.isTrusted = false;
  fake.setConfiguration({});
  const c = new Controller(deps(['/opt/ww/bin/warpwise', '/ws/.venv/bin/warpwise'], [client, spare], made));
  await c.start();
  assert.equal(c.state.kind, 'missing');
  // VS Code fires both at once: trust granted, and the restricted setting it unlocks "changed"
  fake.grantTrust();
  fake.changeConfiguration({ 'warpwise.server.path': '/opt/ww/bin/warpwise' });
  await c.start(); // queued after both restarts: returns once they are done, starts nothing itself
  assert.deepEqual(made.map((m) => m.command), ['/opt/ww/bin/warpwise']);
  assert.equal(client.started, 1);
  assert.equal(spare.started, 0);
  assert.equal(c.state.kind, 'running');
  c.dispose();
});

test('the profile view and report picker commands are the extension\'s own', async () => {
  const c = new Controller(deps([], [], []));
  await c.start();
  assert.ok(fake.registeredCommandIds().includes('warpwise.showProfileView'));
  assert.ok(fake.registeredCommandIds().includes('warpwise.chooseReport'));
  c.dispose();
});
