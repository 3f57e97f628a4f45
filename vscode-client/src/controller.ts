/**
 * The extension's life cycle without the language-client library: resolves and starts the server
 * through injected functions (so tests can drive it with a fake client), keeps the status-bar item in
 * step with the server, and registers the commands that work without a server (restart, output) plus
 * stand-ins for the server's commands when it is missing or does not advertise them.
 */
import * as vscode from 'vscode';
import { REPORT_SCHEME, ReportDocuments, SERVER_COMMANDS, type CommandContext } from './commands';
import { notifyMissingServer } from './missing';
import { checkPython, resolveServer, type MachineEnv, type Runner, type ServerCommand, type ServerMissing } from './serverCommand';
import { needsRestart, readSettings, type WarpwiseSettings } from './settings';
import { ProfileViewPanel, type ProfileViewArg } from './profileView';
import { chooseReport } from './reports';
import { parseStatusParams, reportsView, statusView, type ServerState, type StatusParams } from './status';

/** vscode-languageclient's State values (Stopped = 1, Running = 2, Starting = 3). */
export const CLIENT_STATE = { Stopped: 1, Running: 2, Starting: 3 } as const;

/** The part of vscode-languageclient's LanguageClient that the controller uses. */
export interface ClientLike {
  onDidChangeState(listener: (e: { oldState: number; newState: number }) => void): unknown;
  onNotification(method: string, handler: (params: unknown) => void): unknown;
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly initializeResult: { capabilities: { executeCommandProvider?: { commands: string[] } } } | undefined;
}

export interface ControllerDeps {
  createClient(
    server: ServerCommand,
    settings: WarpwiseSettings,
    output: vscode.LogOutputChannel,
    commandContext: CommandContext,
    reports: ReportDocuments,
  ): { client: ClientLike; watchers: vscode.Disposable[] };
  machineEnv(workspaceFolders: string[], trusted: boolean): MachineEnv;
  runProcess: Runner;
  /** Folder of the profile view's page assets (dist/webview in the .vsix). */
  webviewAssets?: string;
}

const CUDA_LANGUAGES = new Set(['cuda-cpp', 'cuda']);

export class Controller implements vscode.Disposable {
  private readonly output = vscode.window.createOutputChannel('warpwise', { log: true });
  private readonly statusItem = vscode.window.createStatusBarItem('warpwise.status', vscode.StatusBarAlignment.Left, 50);
  private readonly reportsItem = vscode.window.createStatusBarItem('warpwise.reports', vscode.StatusBarAlignment.Left, 49);
  private readonly profileView: ProfileViewPanel;
  /** Starts, stops and restarts run one after another, so a window never has two servers. */
  private queue: Promise<void> = Promise.resolve();
  private restartQueued: Promise<void> | undefined;
  private readonly reports = new ReportDocuments();
  private readonly disposables: vscode.Disposable[] = [];
  private stubs: vscode.Disposable[] = [];
  private watchers: vscode.Disposable[] = [];
  private client: ClientLike | undefined;
  private missing: ServerMissing | undefined;
  private lastStatus: StatusParams | undefined;
  private settings: WarpwiseSettings = readSettings({ get: () => undefined }).settings;

  constructor(private readonly deps: ControllerDeps) {
    this.statusItem.name = 'warpwise';
    this.reportsItem.name = 'warpwise reports';
    this.profileView = new ProfileViewPanel(
      deps.webviewAssets ?? '',
      async (arg: ProfileViewArg) => vscode.commands.executeCommand('warpwise.profileView', arg),
      this.output,
      async (file: string, line: number) => vscode.commands.executeCommand('warpwise.currentLine', { file, line }),
    );
    this.disposables.push(
      this.output,
      this.statusItem,
      this.reportsItem,
      this.profileView,
      this.reports,
      vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, this.reports),
      vscode.commands.registerCommand('warpwise.restartServer', () => this.restart()),
      vscode.commands.registerCommand('warpwise.showOutput', () => this.output.show()),
      vscode.commands.registerCommand('warpwise.showProfileView', (arg?: ProfileViewArg) => this.showProfileView(arg)),
      vscode.commands.registerCommand('warpwise.chooseReport', (arg?: { kernel?: string }) => chooseReport(arg)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('warpwise')) return;
        this.readSettings();
        if (needsRestart((s) => e.affectsConfiguration(s))) void this.restart();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        if (this.missing) void this.restart();
      }),
    );
  }

  /** The state last shown in the status bar. */
  state: ServerState = { kind: 'stopped' };

  private setState(state: ServerState): void {
    this.state = state;
    const view = statusView(state);
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
    this.statusItem.command = view.command;
    this.statusItem.backgroundColor = view.background ? new vscode.ThemeColor(view.background) : undefined;
    this.statusItem.show();
  }

  private showProfileView(arg: ProfileViewArg | undefined): Promise<void> {
    const uri = arg?.uri ?? this.commandContext().activeCudaUri();
    return this.profileView.show({ ...(arg ?? {}), ...(uri ? { uri } : {}) });
  }

  private setReports(status: StatusParams | undefined): void {
    const view = reportsView(status);
    if (!view) {
      this.reportsItem.hide();
      return;
    }
    this.reportsItem.text = view.text;
    this.reportsItem.tooltip = view.tooltip;
    this.reportsItem.command = view.command;
    this.reportsItem.show();
  }

  private readSettings(): WarpwiseSettings {
    const { settings, problems } = readSettings(vscode.workspace.getConfiguration('warpwise'));
    for (const p of problems) this.output.warn(p);
    if (problems.length > 0) {
      void vscode.window.showWarningMessage(`warpwise: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more, see the output)` : ''}`);
    }
    this.settings = settings;
    return settings;
  }

  private commandContext(): CommandContext {
    return {
      activeCudaUri: () => {
        const doc = vscode.window.activeTextEditor?.document;
        if (!doc) return undefined;
        if (CUDA_LANGUAGES.has(doc.languageId) || /\.cuh?$/.test(doc.fileName)) return doc.uri.toString();
        return undefined;
      },
      settings: () => this.settings,
      askKernel: (uri) => this.askKernel(uri),
    };
  }

  /** Offers the kernels the server's code lenses name for the file, else asks for a name. */
  private async askKernel(uri: string): Promise<string | undefined> {
    const kernels = new Set<string>();
    try {
      const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', vscode.Uri.parse(uri));
      for (const lens of lenses ?? []) {
        const arg = lens.command?.arguments?.[0] as { kernel?: unknown } | undefined;
        if (typeof arg?.kernel === 'string') kernels.add(arg.kernel);
      }
    } catch {
      // no lenses: fall back to asking
    }
    if (kernels.size > 0) return vscode.window.showQuickPick([...kernels], { placeHolder: 'Kernel whose SASS schedule to tune' });
    return vscode.window.showInputBox({ prompt: 'Kernel whose SASS schedule to tune (its name in the profile)' });
  }

  private registerStubs(commands: readonly string[], handler: (command: string) => unknown): void {
    for (const c of commands) this.stubs.push(vscode.commands.registerCommand(c, () => handler(c)));
  }

  private disposeStubs(): void {
    for (const d of this.stubs) d.dispose();
    this.stubs = [];
  }

  /** Runs ``task`` after every start/stop/restart asked for before it. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.queue.then(task, task);
    this.queue = next.catch(() => undefined);
    return next;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  private async doStart(): Promise<void> {
    if (this.client) return; // already running: one server per window
    this.setState({ kind: 'starting' });
    this.missing = undefined;
    const settings = this.readSettings();
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const env = this.deps.machineEnv(folders, vscode.workspace.isTrusted);
    let resolution = resolveServer(settings.server, env);
    if (resolution.ok) resolution = await checkPython(resolution, this.deps.runProcess, env);
    if (!resolution.ok) {
      const missing = resolution;
      this.missing = missing;
      this.output.error(`${missing.reason} Looked at: ${missing.tried.join(', ')}. Install: ${missing.installCommand} (${missing.afterInstall})`);
      this.setState({ kind: 'missing', reason: missing.reason });
      this.registerStubs(SERVER_COMMANDS, () => notifyMissingServer(missing, this.output));
      void notifyMissingServer(missing, this.output);
      return;
    }
    this.output.info(`starting ${resolution.command} ${resolution.args.join(' ')} (from ${resolution.source})`);
    const { client, watchers } = this.deps.createClient(resolution, settings, this.output, this.commandContext(), this.reports);
    this.client = client;
    this.watchers = watchers;
    client.onDidChangeState((e) => {
      if (e.newState === CLIENT_STATE.Running) this.setState({ kind: 'running', status: this.lastStatus });
      else if (e.newState === CLIENT_STATE.Starting) this.setState({ kind: 'starting' });
      else if (this.client === client) this.setState({ kind: 'failed', reason: 'The warpwise server stopped (see the output).' });
    });
    client.onNotification('warpwise/status', (raw: unknown) => {
      const status = parseStatusParams(raw);
      if (!status) {
        this.output.warn(`ignored a malformed warpwise/status notification: ${JSON.stringify(raw)}`);
        return;
      }
      this.lastStatus = status;
      if (status.message) this.output.info(status.message);
      this.setState({ kind: 'running', status });
      this.setReports(status);
    });
    try {
      await client.start();
    } catch (e) {
      const reason = `The warpwise server (${resolution.command}) did not start: ${e instanceof Error ? e.message : String(e)}`;
      this.output.error(reason);
      this.setState({ kind: 'failed', reason });
      void vscode.window.showErrorMessage(reason, 'Show Output').then((c) => c && this.output.show());
      return;
    }
    const advertised = new Set(client.initializeResult?.capabilities.executeCommandProvider?.commands ?? []);
    const absent = SERVER_COMMANDS.filter((c) => !advertised.has(c));
    if (absent.length > 0) this.output.warn(`the server does not provide: ${absent.join(', ')}`);
    this.registerStubs(absent, (c) =>
      vscode.window.showWarningMessage(`warpwise: this version of the warpwise server does not provide ${c}.`),
    );
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  private async doStop(): Promise<void> {
    this.disposeStubs();
    this.setReports(undefined);
    const client = this.client;
    this.client = undefined;
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    if (client) {
      try {
        await client.stop();
      } catch (e) {
        this.output.warn(`stopping the server: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    this.setState({ kind: 'stopped' });
  }

  /**
   * Stops the server and starts it again. Requests that arrive while one is waiting to run join it (trust
   * granted and the settings it unlocks fire together), so they give one new server, never two.
   */
  restart(): Promise<void> {
    if (this.restartQueued) return this.restartQueued;
    const queued = this.enqueue(async () => {
      this.restartQueued = undefined;
      await this.doStop();
      this.lastStatus = undefined;
      await this.doStart();
    });
    this.restartQueued = queued;
    return queued;
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }
}
