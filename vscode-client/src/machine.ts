/** The real machine behind `MachineEnv` and `Runner` (file system, PATH, child processes). */
import * as cp from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import type { MachineEnv, Runner } from './serverCommand';

export function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    if (process.platform !== 'win32') fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function machineEnv(workspaceFolders: string[], trusted: boolean): MachineEnv {
  return {
    platform: process.platform,
    pathEnv: process.env.PATH ?? process.env.Path ?? '',
    pathExt: process.env.PATHEXT,
    home: os.homedir(),
    workspaceFolders,
    trusted,
    isExecutable: isExecutableFile,
  };
}

export const runProcess: Runner = (command, args, timeoutMs) =>
  new Promise((resolve) => {
    cp.execFile(command, args, { timeout: timeoutMs, windowsHide: true }, (err, _stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : null) : 0;
      resolve({ code, stderr: String(stderr ?? (err ? err.message : '')) });
    });
  });
