/** Builds the vscode-languageclient LanguageClient for a resolved server command. */
import * as vscode from 'vscode';
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import type { CommandContext, ReportDocuments } from './commands';
import { executeCommandMiddleware } from './commands';
import type { ServerCommand } from './serverCommand';
import { answerConfiguration, readSettings, type WarpwiseSettings } from './settings';

export const CLIENT_ID = 'warpwise'; // languageclient reads `${CLIENT_ID}.trace.server`

export const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'cuda-cpp' },
  { scheme: 'file', language: 'cuda' },
  { scheme: 'file', pattern: '**/*.{cu,cuh}' },
];

function settingsFor(scopeUri: string | undefined): WarpwiseSettings {
  const scope = scopeUri ? vscode.Uri.parse(scopeUri) : undefined;
  return readSettings(vscode.workspace.getConfiguration('warpwise', scope)).settings;
}

export function createClient(
  server: ServerCommand,
  settings: WarpwiseSettings,
  output: vscode.LogOutputChannel,
  commandContext: CommandContext,
  reports: ReportDocuments,
): { client: LanguageClient; watchers: vscode.Disposable[] } {
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    // no `transport`: TransportKind.stdio would append "--stdio" to the arguments
    options: { cwd, env: process.env },
  };
  const watchers = [...settings.profiles, ...settings.binaries].map((glob) => vscode.workspace.createFileSystemWatcher(glob));
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: output,
    traceOutputChannel: output,
    synchronize: { configurationSection: 'warpwise', fileEvents: watchers },
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const editorAnswers = await next(params, token);
          if (!Array.isArray(editorAnswers)) return editorAnswers;
          return answerConfiguration(params.items, editorAnswers, settingsFor);
        },
      },
      executeCommand: executeCommandMiddleware(commandContext, reports),
    },
  };
  return { client: new LanguageClient(CLIENT_ID, 'warpwise', serverOptions, clientOptions), watchers };
}
