/**
 * "warpwise: Choose Active Report": when several reports hold the same kernel, the newest is active; this
 * picker (command palette, code lens, status-bar item) makes another one active through the server's
 * `warpwise.reports` / `warpwise.selectReport` commands.
 */
import * as vscode from 'vscode';

export interface KernelReports {
  kernel: string;
  name: string;
  active: string;
  reports: { path: string; launches: number; samples: number }[];
}

/** Validates the server's `warpwise.reports` answer (drops malformed entries). */
export function parseReports(raw: unknown): KernelReports[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter((k): k is KernelReports =>
    k !== null && typeof k === 'object' && typeof k.kernel === 'string' && typeof k.name === 'string' &&
    typeof k.active === 'string' && Array.isArray(k.reports) &&
    k.reports.every((r: unknown) => r !== null && typeof r === 'object' && typeof (r as { path?: unknown }).path === 'string'));
}

function basename(p: string): string {
  return p.split(/[\\/]/).pop() ?? p;
}

/** Quick-pick items of one kernel's reports, the active one first and marked. */
export function reportItems(k: KernelReports): (vscode.QuickPickItem & { path: string })[] {
  return k.reports.map((r, i) => ({
    label: `${r.path === k.active ? '$(check) ' : ''}${basename(r.path)}`,
    description: `${r.launches} launch${r.launches === 1 ? '' : 'es'} · ${r.samples.toLocaleString('en-US')} warp samples${i === 0 ? ' · newest' : ''}`,
    detail: r.path,
    path: r.path,
  }));
}

export async function chooseReport(arg: { kernel?: string } | undefined): Promise<void> {
  const all = parseReports(await vscode.commands.executeCommand('warpwise.reports', arg?.kernel ? { kernel: arg.kernel } : {}));
  const several = all.filter((k) => k.reports.length > 1);
  if (several.length === 0) {
    void vscode.window.showInformationMessage('warpwise: every profiled kernel is in one report only.');
    return;
  }
  let k = several[0];
  if (several.length > 1) {
    const picked = await vscode.window.showQuickPick(
      several.map((x) => ({ label: x.name, description: `${x.reports.length} reports`, kernel: x })),
      { placeHolder: 'Kernel whose active report to choose' },
    );
    if (!picked) return;
    k = picked.kernel;
  }
  const report = await vscode.window.showQuickPick(reportItems(k), { placeHolder: `Active report of ${k.name}` });
  if (!report) return;
  await vscode.commands.executeCommand('warpwise.selectReport', { kernel: k.kernel, report: report.path });
}
