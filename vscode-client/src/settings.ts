/**
 * The extension's settings (section "warpwise"): typed, validated, with the same defaults as
 * package.json's `contributes.configuration`. A bad value is reported and replaced by its default,
 * so one typo never stops the server (STYLE.md §2). The server pulls them through
 * workspace/configuration; `answerConfiguration` is the client side of that request.
 */

export type Severity = 'error' | 'warning' | 'information' | 'hint';
export type TraceLevel = 'off' | 'messages' | 'verbose';
export type LogLevel = 'error' | 'warning' | 'info' | 'debug';

export interface WarpwiseSettings {
  server: { path: string; python: string };
  profiles: string[];
  binaries: string[];
  /** Minimum share (0..1) of a kernel's warp samples for a line to get a diagnostic. */
  minShare: number;
  /** Smallest estimated speedup (×) for advice to be a diagnostic. */
  minGain: number;
  maxDiagnosticsPerFile: number;
  /** Diagnostic code (hot_line, stall_cause, optimizer id, "default") → severity. */
  severity: Record<string, Severity>;
  inlayHints: { enabled: boolean };
  ncuPath: string;
  profile: { command: string[]; output: string };
  tune: { iterations: number; seed: number; verifySamples: number };
  trace: { server: TraceLevel };
  logLevel: LogLevel;
  /** Recorded (build machine) path prefix → local folder, tried before suffix matching. */
  pathMap: Record<string, string>;
}

export const DEFAULTS: WarpwiseSettings = {
  server: { path: '', python: '' },
  profiles: ['**/*.ncu-rep', '**/*.source.csv'],
  binaries: ['**/*.cubin'],
  minShare: 0.02,
  minGain: 1.02,
  maxDiagnosticsPerFile: 20,
  severity: {},
  inlayHints: { enabled: true },
  ncuPath: 'ncu',
  profile: { command: [], output: 'warpwise.ncu-rep' },
  tune: { iterations: 200, seed: 0, verifySamples: 10000 },
  trace: { server: 'off' },
  logLevel: 'warning',
  pathMap: {},
};

/** The part of vscode.WorkspaceConfiguration that is read here (dotted keys below "warpwise"). */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

const SEVERITIES: readonly string[] = ['error', 'warning', 'information', 'hint'];
const TRACE_LEVELS: readonly string[] = ['off', 'messages', 'verbose'];
const LOG_LEVELS: readonly string[] = ['error', 'warning', 'info', 'debug'];

type Check<T> = (v: unknown) => v is T;
const isString: Check<string> = (v): v is string => typeof v === 'string';
const isBool: Check<boolean> = (v): v is boolean => typeof v === 'boolean';
const isStringArray: Check<string[]> = (v): v is string[] =>
  Array.isArray(v) && v.every((x) => typeof x === 'string');
const isShare: Check<number> = (v): v is number =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;
const isNonNegInt: Check<number> = (v): v is number => Number.isInteger(v) && (v as number) >= 0;
const isPosInt: Check<number> = (v): v is number => Number.isInteger(v) && (v as number) >= 1;
const isGain: Check<number> = (v): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 1;
const isPathMap: Check<Record<string, string>> = (v): v is Record<string, string> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) &&
  Object.entries(v as Record<string, unknown>).every(([k, x]) => k.trim() !== '' && typeof x === 'string' && x.trim() !== '');
const isLogLevel: Check<LogLevel> = (v): v is LogLevel => typeof v === 'string' && LOG_LEVELS.includes(v);
const isTrace: Check<TraceLevel> = (v): v is TraceLevel => typeof v === 'string' && TRACE_LEVELS.includes(v);

/**
 * Reads and validates every setting.
 *
 * @param cfg the "warpwise" configuration section (or any reader of dotted keys)
 * @returns the settings and one message per invalid value (each replaced by its default)
 */
export function readSettings(cfg: ConfigReader): { settings: WarpwiseSettings; problems: string[] } {
  const problems: string[] = [];
  function pick<T>(key: string, check: Check<T>, fallback: T, expected: string): T {
    const v = cfg.get<unknown>(key);
    if (v === undefined || v === null) return fallback;
    if (check(v)) return v;
    problems.push(
      `warpwise.${key} must be ${expected}; got ${JSON.stringify(v)} — using ${JSON.stringify(fallback)}`,
    );
    return fallback;
  }
  const d = DEFAULTS;
  const severity: Record<string, Severity> = {};
  const rawSeverity = cfg.get<unknown>('severity');
  if (rawSeverity !== undefined && rawSeverity !== null) {
    if (typeof rawSeverity !== 'object' || Array.isArray(rawSeverity)) {
      problems.push(`warpwise.severity must be an object of optimizer id → severity; got ${JSON.stringify(rawSeverity)}`);
    } else {
      for (const [id, sev] of Object.entries(rawSeverity as Record<string, unknown>)) {
        if (typeof sev === 'string' && SEVERITIES.includes(sev)) severity[id] = sev as Severity;
        else problems.push(`warpwise.severity.${id} must be one of ${SEVERITIES.join(', ')}; got ${JSON.stringify(sev)} — ignored`);
      }
    }
  }
  const settings: WarpwiseSettings = {
    server: {
      path: pick('server.path', isString, d.server.path, 'a string').trim(),
      python: pick('server.python', isString, d.server.python, 'a string').trim(),
    },
    profiles: pick('profiles', isStringArray, d.profiles, 'a list of glob strings'),
    binaries: pick('binaries', isStringArray, d.binaries, 'a list of glob strings'),
    minShare: pick('minShare', isShare, d.minShare, 'a number from 0 to 1'),
    minGain: pick('minGain', isGain, d.minGain, 'a number ≥ 1'),
    maxDiagnosticsPerFile: pick('maxDiagnosticsPerFile', isNonNegInt, d.maxDiagnosticsPerFile, 'an integer ≥ 0'),
    severity,
    inlayHints: { enabled: pick('inlayHints.enabled', isBool, d.inlayHints.enabled, 'true or false') },
    ncuPath: pick('ncuPath', isString, d.ncuPath, 'a string'),
    profile: {
      command: pick('profile.command', isStringArray, d.profile.command, 'a list of strings (program and arguments)'),
      output: pick('profile.output', isString, d.profile.output, 'a string'),
    },
    tune: {
      iterations: pick('tune.iterations', isPosInt, d.tune.iterations, 'an integer ≥ 1'),
      seed: pick('tune.seed', isNonNegInt, d.tune.seed, 'an integer ≥ 0'),
      verifySamples: pick('tune.verifySamples', isPosInt, d.tune.verifySamples, 'an integer ≥ 1'),
    },
    trace: { server: pick('trace.server', isTrace, d.trace.server, 'off, messages or verbose') },
    logLevel: pick('logLevel', isLogLevel, d.logLevel, 'error, warning, info or debug'),
    pathMap: pick('pathMap', isPathMap, d.pathMap, 'an object of recorded path prefix → local folder'),
  };
  return { settings, problems };
}

/** Looks up a dotted key ("tune.seed") in the settings object; undefined when absent. */
export function lookup(settings: WarpwiseSettings, dotted: string): unknown {
  let cur: unknown = settings;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object' || !(part in (cur as object))) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export interface ConfigurationItemLike {
  scopeUri?: string;
  section?: string;
}

/**
 * Answers a workspace/configuration request: items for "warpwise" (or "warpwise.<key>") get the
 * validated settings of their scope; all other items keep the editor's own answer.
 *
 * @param items the request's items
 * @param editorAnswers the editor's default answers, one per item, same order
 * @param settingsFor validated settings for a scope URI (undefined = window scope)
 * @returns one value per item
 */
export function answerConfiguration(
  items: readonly ConfigurationItemLike[],
  editorAnswers: readonly unknown[],
  settingsFor: (scopeUri: string | undefined) => WarpwiseSettings,
): unknown[] {
  return items.map((item, i) => {
    const section = item.section ?? '';
    if (section === 'warpwise') return settingsFor(item.scopeUri);
    if (section.startsWith('warpwise.')) {
      const v = lookup(settingsFor(item.scopeUri), section.slice('warpwise.'.length));
      return v === undefined ? editorAnswers[i] ?? null : v;
    }
    return editorAnswers[i] ?? null;
  });
}

/** True when a change of these settings needs a new server process (not just a re-read). */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return affects('warpwise.server.path') || affects('warpwise.server.python');
}
