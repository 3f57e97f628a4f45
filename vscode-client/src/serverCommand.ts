/**
 * Which process to start as the warpwise language server, from the settings and the machine.
 * Order (README "Which server is started"):
 *   1. `warpwise.server.path`   → `<path> lsp`
 *   2. `warpwise.server.python` → `<python> -m warpwise.server.cli lsp`
 *   3. `warpwise` on PATH       → `warpwise lsp`
 *   4. a trusted workspace's own virtual environment (`.venv/` or `venv/`) → `<venv>/bin/warpwise lsp`
 * Pure: the file system and PATH come in through `MachineEnv`, so tests need no real machine.
 */
import * as path from 'path';

export const SERVER_MODULE = 'warpwise.server.cli';

export interface MachineEnv {
  platform: NodeJS.Platform;
  /** Value of the PATH variable. */
  pathEnv: string;
  /** Value of PATHEXT (Windows only). */
  pathExt?: string;
  home: string;
  /** Workspace folder paths, first is the primary one. */
  workspaceFolders: string[];
  /** Whether the workspace is trusted (its own executables may be run). */
  trusted: boolean;
  /** True when `p` is an existing regular file that may be executed. */
  isExecutable(p: string): boolean;
}

export interface ServerCommand {
  ok: true;
  command: string;
  args: string[];
  /** Which rule chose it, for the output channel. */
  source: 'server.path' | 'server.python' | 'PATH' | 'workspace venv';
  /** Set when the command is a Python interpreter whose warpwise install should be checked. */
  python?: string;
}

export interface ServerMissing {
  ok: false;
  /** One sentence saying what is missing. */
  reason: string;
  /** Shell command, run in a clone of the warpwise repository, that installs the server (README). */
  installCommand: string;
  /** What to do after running it, e.g. which setting to point at the new executable. */
  afterInstall: string;
  /** Every place that was looked at. */
  tried: string[];
}

export type ServerResolution = ServerCommand | ServerMissing;

/** Expands `~` and `${workspaceFolder}`/`${userHome}` in a configured path. */
export function expandPath(p: string, env: Pick<MachineEnv, 'home' | 'workspaceFolders'>): string {
  let out = p.replace(/\$\{userHome\}/g, env.home);
  const ws = env.workspaceFolders[0];
  if (ws !== undefined) out = out.replace(/\$\{workspaceFolder\}/g, ws);
  if (out === '~') out = env.home;
  else if (out.startsWith('~/')) out = path.join(env.home, out.slice(2));
  return out;
}

function isWindows(env: MachineEnv): boolean {
  return env.platform === 'win32';
}

/**
 * Finds an executable by name on PATH (with PATHEXT on Windows), or checks it when it is a path.
 * Relative paths with a directory part are taken from the primary workspace folder.
 */
export function findExecutable(name: string, env: MachineEnv): string | undefined {
  const p = isWindows(env) ? path.win32 : path.posix;
  const exts = isWindows(env) ? ['', ...(env.pathExt ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean)] : [''];
  const hasDir = name.includes('/') || (isWindows(env) && name.includes('\\'));
  if (hasDir) {
    const abs = p.isAbsolute(name) ? name : p.join(env.workspaceFolders[0] ?? env.home, name);
    for (const ext of exts) if (env.isExecutable(abs + ext)) return abs + ext;
    return undefined;
  }
  const sep = isWindows(env) ? ';' : ':';
  for (const dir of env.pathEnv.split(sep)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = p.join(dir, name + ext);
      if (env.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/**
 * The shell command that installs warpwise from a clone of its repository (it is not published on PyPI):
 * into `python` when one is configured, else into a new `.venv` of the clone, as the README does.
 */
export function installCommand(python: string, env: Pick<MachineEnv, 'platform'>): string {
  if (python) {
    const quoted = /\s/.test(python) ? `"${python}"` : python;
    return `${quoted} -m pip install -q -e .`;
  }
  return env.platform === 'win32'
    ? 'py -m venv .venv && .venv\\Scripts\\pip install -q -e .'
    : 'python3 -m venv .venv && .venv/bin/pip install -q -e .';
}

/** What to do once {@link installCommand} ran: where it runs, and how the extension then finds the server. */
export function afterInstall(python: string, env: Pick<MachineEnv, 'platform'>): string {
  const where = 'Run it in a clone of the warpwise repository (warpwise is not on PyPI)';
  if (python) return `${where}, then run "warpwise: Restart Language Server".`;
  const exe = env.platform === 'win32' ? '.venv\\Scripts\\warpwise.exe' : '.venv/bin/warpwise';
  return `${where}, then set warpwise.server.path to <clone>/${exe} (or open the clone as the workspace).`;
}

function missing(reason: string, python: string, env: Pick<MachineEnv, 'platform'>, tried: string[]): ServerMissing {
  return { ok: false, reason, installCommand: installCommand(python, env), afterInstall: afterInstall(python, env), tried };
}

/**
 * Chooses the server command.
 *
 * @param server the `warpwise.server` settings (path and python, may be empty)
 * @returns the command to start, or why none was found and how to install one
 */
export function resolveServer(server: { path: string; python: string }, env: MachineEnv): ServerResolution {
  const tried: string[] = [];
  const configuredPython = server.python ? expandPath(server.python, env) : '';
  if (server.path) {
    const wanted = expandPath(server.path, env);
    const found = findExecutable(wanted, env);
    if (found) return { ok: true, command: found, args: ['lsp'], source: 'server.path' };
    return missing(`warpwise.server.path is "${server.path}", which is not an executable file.`, configuredPython, env, [wanted]);
  }
  if (configuredPython) {
    const found = findExecutable(configuredPython, env);
    if (found) {
      return { ok: true, command: found, args: ['-m', SERVER_MODULE, 'lsp'], source: 'server.python', python: found };
    }
    return missing(`warpwise.server.python is "${server.python}", which is not an executable file.`, '', env, [configuredPython]);
  }
  const onPath = findExecutable('warpwise', env);
  tried.push('warpwise on PATH');
  if (onPath) return { ok: true, command: onPath, args: ['lsp'], source: 'PATH' };
  if (env.trusted) {
    const p = isWindows(env) ? path.win32 : path.posix;
    for (const ws of env.workspaceFolders) {
      for (const venv of ['.venv', 'venv']) {
        const exe = isWindows(env) ? p.join(ws, venv, 'Scripts', 'warpwise.exe') : p.join(ws, venv, 'bin', 'warpwise');
        tried.push(exe);
        if (env.isExecutable(exe)) return { ok: true, command: exe, args: ['lsp'], source: 'workspace venv' };
      }
    }
  }
  return missing(
    'The warpwise language server was not found: warpwise.server.path and warpwise.server.python are not set and there is no warpwise executable on PATH.',
    '', env, tried,
  );
}

/** Runs a program and reports its exit code and stderr (injected so tests need no processes). */
export type Runner = (command: string, args: string[], timeoutMs: number) => Promise<{ code: number | null; stderr: string }>;

/**
 * Checks that a Python interpreter can import the server; a missing module becomes a ServerMissing
 * with an install command for that interpreter.
 */
export async function checkPython(
  resolved: ServerCommand,
  run: Runner,
  env: Pick<MachineEnv, 'platform'>,
): Promise<ServerResolution> {
  if (!resolved.python) return resolved;
  const res = await run(resolved.python, ['-c', `import ${SERVER_MODULE}`], 20000);
  if (res.code === 0) return resolved;
  const lastLine = res.stderr.trim().split(/\r?\n/).pop() ?? '';
  return missing(`${resolved.python} cannot import ${SERVER_MODULE}${lastLine ? ` (${lastLine})` : ''}.`, resolved.python, env, [resolved.python]);
}
