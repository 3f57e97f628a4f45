/**
 * The server's commands as the user runs them (palette, code lens, status bar). The language client
 * registers the commands the server advertises and routes them through `executeCommandMiddleware`,
 * which fills in missing arguments before the request and shows the result after it.
 */
import * as vscode from 'vscode';
import type { WarpwiseSettings } from './settings';

/** Commands implemented by the server (workspace/executeCommand). */
export const SERVER_COMMANDS = [
  'warpwise.showReport',
  'warpwise.reloadProfiles',
  'warpwise.profile',
  'warpwise.tuneSchedule',
] as const;

export const REPORT_SCHEME = 'warpwise-report';

export interface CommandContext {
  /** URI (string) of the active editor when it shows a CUDA file. */
  activeCudaUri(): string | undefined;
  settings(): WarpwiseSettings;
  /** Asks the user for a kernel name; undefined when cancelled. */
  askKernel(uri: string): Promise<string | undefined>;
}

/**
 * Completes a command's arguments.
 *
 * @returns the arguments to send, or undefined when the command must not run (the user was told why)
 */
export async function prepareArgs(command: string, args: unknown[], ctx: CommandContext): Promise<unknown[] | undefined> {
  switch (command) {
    case 'warpwise.showReport': {
      if (args.length > 0) return args;
      const uri = ctx.activeCudaUri();
      return uri ? [uri] : [];
    }
    case 'warpwise.profile': {
      if (ctx.settings().profile.command.length === 0) {
        const choice = await vscode.window.showWarningMessage(
          'warpwise: set warpwise.profile.command to the program to profile (program and arguments), then run "Profile Program" again.',
          'Open Settings',
        );
        if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'warpwise.profile');
        return undefined;
      }
      return args;
    }
    case 'warpwise.tuneSchedule': {
      const first = args[0] as { uri?: unknown; kernel?: unknown } | undefined;
      if (first && typeof first.uri === 'string' && typeof first.kernel === 'string' && first.kernel) return args;
      const uri = first && typeof first.uri === 'string' ? first.uri : ctx.activeCudaUri();
      if (!uri) {
        void vscode.window.showErrorMessage('warpwise: open the CUDA file of the kernel to tune first.');
        return undefined;
      }
      const kernel = first && typeof first.kernel === 'string' && first.kernel ? first.kernel : await ctx.askKernel(uri);
      if (!kernel) return undefined;
      return [{ uri, kernel }];
    }
    default:
      return args;
  }
}

/** Read-only documents that show the server's text report. */
export class ReportDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** URI of the report document for a source file (or of the whole workspace). */
  uriFor(source: string | undefined): vscode.Uri {
    const name = source ? (source.split('/').pop() ?? 'report') : 'workspace';
    return vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/warpwise report - ${decodeURIComponent(name)}.txt` });
  }

  /** Stores the text and opens (or refreshes) its document beside the source. */
  async show(text: string, source: string | undefined): Promise<vscode.TextEditor> {
    const uri = this.uriFor(source);
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    return vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** Shows what a command returned. */
export async function showResult(command: string, args: unknown[], result: unknown, reports: ReportDocuments): Promise<void> {
  if (command === 'warpwise.showReport') {
    if (typeof result === 'string') await reports.show(result, typeof args[0] === 'string' ? args[0] : undefined);
    else void vscode.window.showWarningMessage('warpwise: the server returned no report (is a profile loaded?).');
    return;
  }
  if (typeof result === 'string' && result) void vscode.window.showInformationMessage(`warpwise: ${result}`);
}

export type ExecuteNext = (command: string, args: unknown[]) => unknown;

/** The language client's `middleware.executeCommand`. */
export function executeCommandMiddleware(ctx: CommandContext, reports: ReportDocuments) {
  return async (command: string, args: unknown[], next: ExecuteNext): Promise<unknown> => {
    const prepared = await prepareArgs(command, args ?? [], ctx);
    if (prepared === undefined) return undefined;
    const result = await next(command, prepared);
    await showResult(command, prepared, result, reports);
    return result;
  };
}
