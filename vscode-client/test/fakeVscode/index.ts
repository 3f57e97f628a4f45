/**
 * A small stand-in for the `vscode` module: the parts the client's logic touches. Every UI call is
 * recorded in `calls`; what the "user" answers comes from `answers`. `reset()` between tests.
 */

export interface Call {
  api: string;
  args: unknown[];
}

export const calls: Call[] = [];
export const answers: {
  showErrorMessage?: string;
  showWarningMessage?: string;
  showInformationMessage?: string;
  showInputBox?: string;
  showQuickPick?: string;
} = {};

function record(api: string, args: unknown[]): void {
  calls.push({ api, args });
}

export function callsTo(api: string): Call[] {
  return calls.filter((c) => c.api === api);
}

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  readonly event = (listener: (e: T) => void): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => (this.listeners = this.listeners.filter((l) => l !== listener)));
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query = '',
  ) {}
  static parse(s: string): Uri {
    const m = /^([a-z][\w+.-]*):(?:\/\/[^/]*)?([^?]*)(?:\?(.*))?$/i.exec(s);
    if (!m) throw new Error(`fake Uri.parse: not a URI: ${s}`);
    return new Uri(m[1], decodeURIComponent(m[2]), m[3] ?? '');
  }
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static from(c: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(c.scheme, c.path ?? '', c.query ?? '');
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    const authority = this.scheme === 'file' ? '//' : '';
    return `${this.scheme}:${authority}${encodeURI(this.path)}${this.query ? `?${this.query}` : ''}`;
  }
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

interface FakeDocument {
  uri: Uri;
  languageId: string;
  fileName: string;
  getText(): string;
}

const providers = new Map<string, { provideTextDocumentContent(uri: Uri): string }>();
const registeredCommands = new Map<string, (...args: unknown[]) => unknown>();
let configuration: Record<string, unknown> = {};

export interface FakeStatusBarItem {
  id: string;
  name?: string;
  text: string;
  tooltip?: string;
  command?: string;
  backgroundColor?: ThemeColor;
  visible: boolean;
  show(): void;
  hide(): void;
  dispose(): void;
}

export interface FakeLogChannel {
  name: string;
  lines: string[];
  shown: number;
  info(m: string): void;
  warn(m: string): void;
  error(m: string): void;
  appendLine(m: string): void;
  show(): void;
  dispose(): void;
}

export const statusBarItems: FakeStatusBarItem[] = [];
export const outputChannels: FakeLogChannel[] = [];

export const window = {
  activeTextEditor: undefined as { document: FakeDocument } | undefined,
  createStatusBarItem(id: string): FakeStatusBarItem {
    const item: FakeStatusBarItem = {
      id,
      text: '',
      visible: false,
      show: () => (item.visible = true),
      hide: () => (item.visible = false),
      dispose: () => (item.visible = false),
    };
    statusBarItems.push(item);
    return item;
  },
  createOutputChannel(name: string): FakeLogChannel {
    const ch: FakeLogChannel = {
      name,
      lines: [],
      shown: 0,
      info: (m) => ch.lines.push(`[info] ${m}`),
      warn: (m) => ch.lines.push(`[warn] ${m}`),
      error: (m) => ch.lines.push(`[error] ${m}`),
      appendLine: (m) => ch.lines.push(m),
      show: () => ch.shown++,
      dispose: () => undefined,
    };
    outputChannels.push(ch);
    return ch;
  },
  showErrorMessage(message: string, ...items: string[]): Promise<string | undefined> {
    record('window.showErrorMessage', [message, ...items]);
    return Promise.resolve(answers.showErrorMessage);
  },
  showWarningMessage(message: string, ...items: string[]): Promise<string | undefined> {
    record('window.showWarningMessage', [message, ...items]);
    return Promise.resolve(answers.showWarningMessage);
  },
  showInformationMessage(message: string, ...items: string[]): Promise<string | undefined> {
    record('window.showInformationMessage', [message, ...items]);
    return Promise.resolve(answers.showInformationMessage);
  },
  showInputBox(options: unknown): Promise<string | undefined> {
    record('window.showInputBox', [options]);
    return Promise.resolve(answers.showInputBox);
  },
  showQuickPick(items: string[], options: unknown): Promise<string | undefined> {
    record('window.showQuickPick', [items, options]);
    return Promise.resolve(answers.showQuickPick);
  },
  showTextDocument(doc: FakeDocument, options: unknown): Promise<{ document: FakeDocument }> {
    record('window.showTextDocument', [doc, options]);
    return Promise.resolve({ document: doc });
  },
};

export interface FakeConfigurationChange {
  affectsConfiguration(section: string): boolean;
}

export const configurationChanged = new EventEmitter<FakeConfigurationChange>();
const trustGranted = new EventEmitter<void>();

export const workspace = {
  workspaceFolders: undefined as { uri: Uri }[] | undefined,
  isTrusted: true,
  onDidChangeConfiguration: configurationChanged.event,
  onDidGrantWorkspaceTrust: trustGranted.event,
  registerTextDocumentContentProvider(scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }): Disposable {
    providers.set(scheme, provider);
    return new Disposable(() => providers.delete(scheme));
  },
  openTextDocument(uri: Uri): Promise<FakeDocument> {
    record('workspace.openTextDocument', [uri]);
    const provider = providers.get(uri.scheme);
    return Promise.resolve({
      uri,
      languageId: 'plaintext',
      fileName: uri.path,
      getText: () => provider?.provideTextDocumentContent(uri) ?? '',
    });
  },
  getConfiguration(section: string) {
    return {
      get<T>(key: string): T | undefined {
        return configuration[`${section}.${key}`] as T | undefined;
      },
    };
  },
};

export function registeredCommandIds(): string[] {
  return [...registeredCommands.keys()].sort();
}

export const commands = {
  registerCommand(id: string, fn: (...args: unknown[]) => unknown): Disposable {
    if (registeredCommands.has(id)) throw new Error(`command '${id}' already exists`);
    registeredCommands.set(id, fn);
    return new Disposable(() => registeredCommands.delete(id));
  },
  executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    record('commands.executeCommand', [id, ...args]);
    const fn = registeredCommands.get(id);
    return Promise.resolve(fn ? fn(...args) : undefined);
  },
};

export const env = {
  clipboard: {
    text: '',
    writeText(t: string): Promise<void> {
      env.clipboard.text = t;
      return Promise.resolve();
    },
  },
};

/** Changes settings and fires onDidChangeConfiguration for the changed keys (and their parents). */
export function changeConfiguration(values: Record<string, unknown>): void {
  const changed = Object.keys(values).filter((k) => configuration[k] !== values[k]);
  configuration = { ...configuration, ...values };
  configurationChanged.fire({
    affectsConfiguration: (section) => changed.some((k) => k === section || k.startsWith(`${section}.`)),
  });
}

/** Sets the flat configuration ("warpwise.minShare" → value) that getConfiguration reads. */
export function setConfiguration(values: Record<string, unknown>): void {
  configuration = { ...values };
}

/** Fires onDidGrantWorkspaceTrust (and makes the workspace trusted). */
export function grantTrust(): void {
  workspace.isTrusted = true;
  trustGranted.fire();
}

export function reset(): void {
  calls.length = 0;
  for (const k of Object.keys(answers)) delete (answers as Record<string, unknown>)[k];
  registeredCommands.clear();
  providers.clear();
  configuration = {};
  env.clipboard.text = '';
  window.activeTextEditor = undefined;
  statusBarItems.length = 0;
  outputChannels.length = 0;
  configurationChanged.dispose();
  workspace.workspaceFolders = undefined;
  workspace.isTrusted = true;
}
