/**
 * Entry point: wires the controller to the real language client, file system and processes.
 */
import * as vscode from 'vscode';
import { createClient } from './client';
import { Controller } from './controller';
import { machineEnv, runProcess } from './machine';

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  controller = new Controller({
    createClient,
    machineEnv,
    runProcess,
    webviewAssets: vscode.Uri.joinPath(context.extensionUri, 'dist', 'webview').fsPath,
  });
  context.subscriptions.push(controller);
  await controller.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}
