/**
 * The "warpwise: Show Profile View" webview panel. It shows the same page as `warpwise advise --format
 * html` (server/webview/profile.html, .css, .js, copied into dist/webview/ at build time), filled with the
 * model the server's `warpwise.profileView` command returns. The page posts `{type: 'reveal', file, line}`
 * when a line or an advice is clicked; the panel reveals that line in the source editor where it is NOW (the
 * page shows the profiled text; the server maps the line across edits made since, as the diagnostics do).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

export const VIEW_TYPE = 'warpwise.profileView';
const SLOTS = /WARPWISE_TITLE|\/\*WARPWISE_CSS\*\/|\/\*WARPWISE_JS\*\/|WARPWISE_DATA/g;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/**
 * Fills the page template in one pass (so nothing inserted is taken for a placeholder), as the server's
 * profile_view.render_html does for the standalone file.
 */
export function fillPage(template: string, css: string, js: string, data: unknown, title: string): string {
  const fill: Record<string, string> = {
    WARPWISE_TITLE: escapeHtml(title),
    '/*WARPWISE_CSS*/': css,
    '/*WARPWISE_JS*/': js.replace(/<\/script/g, '<\\/script'),
    WARPWISE_DATA: JSON.stringify(data).replace(/<\//g, '<\\/').replace(/<!--/g, '<\\!--'),
  };
  return template.replace(SLOTS, (m) => fill[m] ?? m);
}

/** A `reveal` message from the page, validated; undefined for anything else. */
export function parseReveal(msg: unknown): { file: string; line: number } | undefined {
  if (msg === null || typeof msg !== 'object') return undefined;
  const m = msg as Record<string, unknown>;
  if (m.type !== 'reveal' || typeof m.file !== 'string' || !Number.isInteger(m.line) || (m.line as number) < 1) return undefined;
  return { file: m.file, line: m.line as number };
}

/**
 * The line to reveal for a profiled line: the server's `warpwise.currentLine` answer `{line, stale}` (where
 * the line is now, after edits above it), else the profiled line itself.
 */
export function currentLine(answer: unknown, profiled: number): number {
  if (answer !== null && typeof answer === 'object') {
    const line = (answer as { line?: unknown }).line;
    if (Number.isInteger(line) && (line as number) >= 1) return line as number;
  }
  return profiled;
}

export interface ProfileViewArg {
  uri?: string;
  kernel?: string;
}

/** One panel per window, reused (and refreshed) by every Show Profile View. */
export class ProfileViewPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private source: vscode.ViewColumn | undefined;

  constructor(
    private readonly assets: string,
    private readonly fetchData: (arg: ProfileViewArg) => Promise<unknown>,
    private readonly log: vscode.LogOutputChannel,
    /** The server's `warpwise.currentLine` for `{file, line}` (the page's lines are the profiled ones). */
    private readonly mapLine: (file: string, line: number) => Promise<unknown> = async () => undefined,
  ) {}

  async show(arg: ProfileViewArg): Promise<void> {
    let data: unknown;
    try {
      data = await this.fetchData(arg);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.log.error(`profile view: ${why}`);
      void vscode.window.showErrorMessage(`warpwise: cannot show the profile view (is the server running?): ${why}`);
      return;
    }
    if (!data || typeof data !== 'object' || !Array.isArray((data as { kernels?: unknown }).kernels)) {
      void vscode.window.showWarningMessage('warpwise: the server returned no profile view (is a profile loaded?).');
      return;
    }
    const kernels = (data as { kernels: { name?: string }[] }).kernels;
    if (kernels.length === 0) {
      void vscode.window.showWarningMessage('warpwise: no profiled kernel covers this file.');
      return;
    }
    const read = (f: string) => fs.readFileSync(path.join(this.assets, f), 'utf8');
    const title = `warpwise: ${kernels[0].name ?? 'profile'}`;
    const html = fillPage(read('profile.html'), read('profile.css'), read('profile.js'), data, title);
    this.source = vscode.window.activeTextEditor?.viewColumn ?? this.source ?? vscode.ViewColumn.One;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(VIEW_TYPE, title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false }, {
        enableScripts: true,
        localResourceRoots: [],
      });
      this.panel.onDidDispose(() => (this.panel = undefined));
      this.panel.webview.onDidReceiveMessage((msg) => void this.reveal(msg));
    }
    this.panel.title = title;
    this.panel.webview.html = html;
    this.panel.reveal(vscode.ViewColumn.Beside);
  }

  private async reveal(msg: unknown): Promise<void> {
    const r = parseReveal(msg);
    if (!r) return;
    try {
      let line = r.line;
      try {
        line = currentLine(await this.mapLine(r.file, r.line), r.line);
      } catch (e) {
        this.log.warn(`profile view: no current line for ${r.file}:${r.line}: ${e instanceof Error ? e.message : String(e)}`);
      }
      const pos = new vscode.Position(line - 1, 0);
      await vscode.window.showTextDocument(vscode.Uri.file(r.file), {
        viewColumn: this.source ?? vscode.ViewColumn.One,
        selection: new vscode.Range(pos, pos),
        preserveFocus: false,
      });
    } catch (e) {
      this.log.warn(`profile view: cannot reveal ${r.file}:${r.line}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
