/**
 * What the user sees when no server can be started: one notification that says why, offers the
 * install command (copied to the clipboard on request) and opens the settings.
 */
import * as vscode from 'vscode';
import type { ServerMissing } from './serverCommand';

export const COPY_INSTALL = 'Copy Install Command';
export const OPEN_SETTINGS = 'Open Settings';
export const SHOW_OUTPUT = 'Show Output';

/** The notification's text. */
export function missingServerMessage(missing: ServerMissing): string {
  return `${missing.reason} Install it with: ${missing.installCommand} — ${missing.afterInstall} Or set warpwise.server.path / warpwise.server.python to an existing install.`;
}

/**
 * Shows the notification and carries out the chosen action.
 *
 * @returns the action the user chose (undefined when dismissed)
 */
export async function notifyMissingServer(missing: ServerMissing, output?: { show(): void }): Promise<string | undefined> {
  const choice = await vscode.window.showErrorMessage(missingServerMessage(missing), COPY_INSTALL, OPEN_SETTINGS, SHOW_OUTPUT);
  if (choice === COPY_INSTALL) {
    await vscode.env.clipboard.writeText(missing.installCommand);
    void vscode.window.showInformationMessage(`Copied: ${missing.installCommand} — ${missing.afterInstall}`);
  } else if (choice === OPEN_SETTINGS) {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'warpwise.server');
  } else if (choice === SHOW_OUTPUT) {
    output?.show();
  }
  return choice;
}
