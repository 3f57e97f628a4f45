/**
 * The status-bar item's text from the server's state and its `warpwise/status` notification
 * (`{profiles: int, kernels: int, message: string}`, sent after loading profiles).
 */

export interface StatusParams {
  profiles: number;
  kernels: number;
  message: string;
  /** Kernels held by more than one report (the newest is active; a picker chooses another). */
  choices: number;
}

export type ServerState =
  | { kind: 'starting' }
  | { kind: 'running'; status?: StatusParams }
  | { kind: 'missing'; reason: string }
  | { kind: 'failed'; reason: string }
  | { kind: 'stopped' };

export interface StatusView {
  text: string;
  tooltip: string;
  /** Background: undefined, or a theme color id for warnings/errors. */
  background?: 'statusBarItem.warningBackground' | 'statusBarItem.errorBackground';
  /** Command run on click. */
  command: string;
}

/** Validates a `warpwise/status` notification; undefined when it is not one. */
export function parseStatusParams(raw: unknown): StatusParams | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  const count = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;
  if (!count(r.profiles) || !count(r.kernels)) return undefined;
  return {
    profiles: r.profiles,
    kernels: r.kernels,
    message: typeof r.message === 'string' ? r.message : '',
    choices: count(r.choices) ? r.choices : 0,
  };
}

/** The report picker's status-bar item: shown only when some kernel is in several reports. */
export function reportsView(status: StatusParams | undefined): { text: string; tooltip: string; command: string } | undefined {
  if (!status || status.choices === 0) return undefined;
  return {
    text: `$(versions) ${plural(status.choices, 'kernel')} in several reports`,
    tooltip: 'warpwise: the newest report of each kernel is active. Click to choose another one.',
    command: 'warpwise.chooseReport',
  };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** What the status-bar item shows for a state. */
export function statusView(state: ServerState): StatusView {
  switch (state.kind) {
    case 'starting':
      return { text: '$(sync~spin) warpwise', tooltip: 'warpwise: starting the language server…', command: 'warpwise.showOutput' };
    case 'running': {
      const s = state.status;
      if (!s) {
        return { text: '$(pulse) warpwise', tooltip: 'warpwise: server running, no profile loaded yet', command: 'warpwise.showOutput' };
      }
      const text =
        s.profiles === 0
          ? '$(pulse) warpwise: no profile'
          : `$(pulse) warpwise: ${plural(s.profiles, 'profile')} · ${plural(s.kernels, 'kernel')}`;
      const tooltip = [`warpwise: ${plural(s.profiles, 'profile')}, ${plural(s.kernels, 'kernel')} loaded`, s.message]
        .filter(Boolean)
        .join('\n');
      return { text, tooltip: `${tooltip}\nClick to show the report.`, command: 'warpwise.showReport' };
    }
    case 'missing':
      return {
        text: '$(warning) warpwise: server not found',
        tooltip: `${state.reason}\nClick for the install command.`,
        background: 'statusBarItem.warningBackground',
        command: 'warpwise.restartServer',
      };
    case 'failed':
      return {
        text: '$(error) warpwise: server failed',
        tooltip: `${state.reason}\nClick to show the output.`,
        background: 'statusBarItem.errorBackground',
        command: 'warpwise.showOutput',
      };
    case 'stopped':
      return { text: '$(circle-slash) warpwise', tooltip: 'warpwise: server stopped. Click to restart.', command: 'warpwise.restartServer' };
  }
}
