// The Zero view (a webview view, id zero.chat) and the read-only documents
// its "open diff" shows.

import * as vscode from 'vscode';
import * as path from 'node:path';
import { IMAGE_EXTENSIONS, MAX_ATTACHMENTS, imageType, refusal, refusedMessage, toParams, type PendingAttachment } from './attachments';
import type { Controller } from './extension';
import { ErrorCodes } from './protocol';
import { parseBuiltin } from './rewind';
import type { FromView, ToView } from './webview/messages';

/** Serves zero-diff:/path?session=…&block=…&index=…&side=old|new. */
export class DiffContentProvider implements vscode.TextDocumentContentProvider {
  static readonly scheme = 'zero-diff';
  constructor(private readonly c: Controller) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    const q = new URLSearchParams(uri.query);
    const b = this.c.model(q.get('session') ?? '')?.get(q.get('block') ?? '');
    if (!b || b.kind !== 'tool') return '';
    const d = b.diffs[Number(q.get('index'))];
    if (!d) return '';
    return q.get('side') === 'old' ? (d.old_text ?? '') : d.new_text;
  }

  static uri(session: string, block: string, index: number, side: 'old' | 'new', file: string): vscode.Uri {
    const q = new URLSearchParams({ session, block, index: String(index), side }).toString();
    return vscode.Uri.from({ scheme: DiffContentProvider.scheme, path: path.isAbsolute(file) ? vscode.Uri.file(file).path : `/${file}`, query: q });
  }
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view?: vscode.WebviewView;
  private shown?: string;
  private flush?: ReturnType<typeof setTimeout>;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly c: Controller,
    private readonly diffs: DiffContentProvider,
  ) {
    c.onDidChange(({ session, reset }) => {
      if (session !== this.c.current) return;
      if (reset || this.shown !== session) this.reset();
      else this.schedule();
    });
    c.onDidChangeServer(() => {
      this.postServer();
      // No current session any more (it was deleted): the view empties.
      if (this.shown !== this.c.current) this.reset();
    });
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((m: FromView) => void this.onMessage(m).catch((e) => this.c.report(e)));
    view.onDidDispose(() => (this.view = undefined));
    view.onDidChangeVisibility(() => {
      if (view.visible) this.reset();
      else this.c.viewHidden();
    });
    void this.c.ensureStarted();
  }

  private post(m: ToView): void {
    void this.view?.webview.postMessage(m);
  }

  private postServer(): void {
    this.post({
      type: 'server',
      state: this.c.serverState,
      message: this.c.serverMessage,
      sessions: this.c.sessions,
      current: this.c.current ?? null,
      modes: this.c.modes,
      mode: this.c.currentMode(),
    });
  }

  /** Sends the whole current session. */
  private reset(): void {
    if (this.flush) clearTimeout(this.flush);
    this.flush = undefined;
    const m = this.c.model();
    this.shown = this.c.current;
    if (!m) {
      this.post({ type: 'reset', session: this.c.current ?? null, blocks: [], status: null });
      return;
    }
    m.takeChanges();
    this.post({ type: 'reset', session: this.c.current ?? null, blocks: m.blocks, status: m.status() });
  }

  /** Sends what changed, at most every 50 ms. */
  private schedule(): void {
    if (this.flush) return;
    this.flush = setTimeout(() => {
      this.flush = undefined;
      const m = this.c.model();
      if (!m || !this.view) return;
      const ch = m.takeChanges();
      this.post({ type: 'patch', session: this.c.current ?? null, blocks: ch.blocks, status: ch.status });
    }, 50);
  }

  private async onMessage(m: FromView): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.postServer();
        this.reset();
        return;
      case 'send': {
        // /undo, /rewind, /compact and /fork are the view's own; a
        // message with pictures is never a command.
        const b = (m.attachments ?? []).length === 0 ? parseBuiltin(m.text) : undefined;
        if (b && 'error' in b) {
          this.post({ type: 'sendFailed', text: m.text, attachments: [], message: b.error });
          return;
        }
        if (b) {
          await this.c.builtin(b);
          return;
        }
        try {
          await this.c.send(m.text, toParams(m.attachments ?? []));
        } catch (err) {
          // Refused before anything ran (a picture the server does not
          // take): the message and its pictures go back to the composer.
          if ((err as { code?: unknown })?.code !== ErrorCodes.invalidParams) throw err;
          const message = refusedMessage(err instanceof Error ? err.message : String(err));
          this.c.output.appendLine(`message not sent: ${message}`);
          this.post({ type: 'sendFailed', text: m.text, attachments: m.attachments ?? [], message });
        }
        return;
      }
      case 'undo':
        await this.c.undo();
        return;
      case 'rewind':
        await this.c.rewindTo(m.checkpoint);
        return;
      case 'pickAttachments': {
        const uris = await vscode.window.showOpenDialog({
          canSelectMany: true,
          openLabel: 'Attach',
          title: 'Attach pictures to the message',
          filters: { Pictures: IMAGE_EXTENSIONS },
          ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}),
        });
        if (uris && uris.length > 0) this.post({ type: 'attachments', ...(await readPictures(uris)) });
        return;
      }
      case 'attachUris': {
        const uris: vscode.Uri[] = [];
        for (const u of m.uris) {
          try {
            uris.push(vscode.Uri.parse(u, true));
          } catch {
            // not a URI: said below as a file that is not a picture
          }
        }
        if (uris.length > 0) this.post({ type: 'attachments', ...(await readPictures(uris)) });
        return;
      }
      case 'image': {
        try {
          const im = await this.c.image(m.session, m.sha256);
          const url = /^image\/(png|jpeg|gif|webp|bmp)$/.test(im.mimeType) ? `data:${im.mimeType};base64,${im.data}` : undefined;
          this.post(url ? { type: 'image', sha256: m.sha256, url } : { type: 'image', sha256: m.sha256, error: `not a picture the view shows (${im.mimeType})` });
        } catch (err) {
          this.post({ type: 'image', sha256: m.sha256, error: err instanceof Error ? err.message : String(err) });
        }
        return;
      }
      case 'commands':
        this.post({ type: 'commands', commands: await this.c.commands() });
        return;
      case 'cancel':
        await this.c.cancel();
        return;
      case 'approve':
        await this.c.approve(m.id, m.approve, m.always);
        return;
      case 'answer':
        try {
          await this.c.answerQuestion(m.id, m.action, m.content);
        } catch (err) {
          // Refused (a value the form does not take, or it no longer
          // waits): the card says why and takes another answer.
          this.post({ type: 'answerFailed', id: m.id, message: err instanceof Error ? err.message : String(err) });
        }
        return;
      case 'openQuestionPage':
        await this.c.openQuestionPage(m.id);
        return;
      case 'mcpLogin':
        this.c.mcpLogin(m.name);
        return;
      case 'newSession':
        await this.c.newSession();
        return;
      case 'setMode':
        await this.c.setMode(m.mode);
        return;
      case 'switch':
        await this.c.switchSession(m.id);
        return;
      case 'renameSession':
        await this.c.renameSession(m.id);
        return;
      case 'deleteSession':
        await this.c.deleteSession(m.id);
        return;
      case 'refreshSessions':
        await this.c.refreshSessions();
        return;
      case 'restart':
        await this.c.restart();
        return;
      case 'command':
        if (['zero.showOutput', 'zero.setApiKey', 'workbench.action.openSettings'].includes(m.command)) {
          await vscode.commands.executeCommand(m.command, ...(m.command === 'workbench.action.openSettings' ? ['zero.'] : []));
        }
        return;
      case 'openDiff': {
        const session = this.c.current;
        const b = this.c.model()?.get(m.block);
        const d = b?.kind === 'tool' ? b.diffs[m.index] : undefined;
        if (!session || !d) return;
        const left = DiffContentProvider.uri(session, m.block, m.index, 'old', d.path);
        const right = DiffContentProvider.uri(session, m.block, m.index, 'new', d.path);
        const name = d.path.split(/[\\/]/).pop() ?? d.path;
        await vscode.commands.executeCommand('vscode.diff', left, right, `${name} (Zero's change)`, { preview: true });
        void this.diffs; // the provider serves both sides
        return;
      }
      case 'openFile': {
        const doc = await vscode.workspace.openTextDocument(resolvePath(m.path));
        await vscode.window.showTextDocument(doc, { preview: true });
        return;
      }
      case 'openLink': {
        const h = m.href;
        if (/^(https?:|mailto:)/i.test(h)) await vscode.env.openExternal(vscode.Uri.parse(h));
        else if (!/^[a-z][a-z0-9+.-]*:/i.test(h) && !h.startsWith('#')) {
          const doc = await vscode.workspace.openTextDocument(resolvePath(h));
          await vscode.window.showTextDocument(doc, { preview: true });
        }
        return;
      }
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = makeNonce();
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'view.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      // Pictures only as data: URLs (zero/image's, the composer's): nothing remote, no files.
      'img-src data:',
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>Zero</title>
</head>
<body>
<header id="bar">
  <select id="sessions" title="Sessions"></select>
  <button id="rename" class="icon" title="Rename this session" aria-label="Rename this session" hidden>✎</button>
  <button id="delete" class="icon" title="Delete this session" aria-label="Delete this session" hidden>✕</button>
  <button id="new" class="icon" title="New session" aria-label="New session">+</button>
</header>
<div id="banner" hidden></div>
<main id="log" aria-live="polite"></main>
<div id="approvals"></div>
<footer id="composer">
  <ul id="slash" role="listbox" aria-label="Commands" hidden></ul>
  <div id="attached" aria-label="Pictures to send" hidden></div>
  <div id="composer-error" class="notice error" role="alert" hidden></div>
  <textarea id="input" rows="3" placeholder="Ask Zero… (Enter sends, Shift+Enter for a new line; paste or drop pictures)" aria-label="Message"></textarea>
  <div id="actions">
    <button id="attach" class="secondary" title="Attach pictures (PNG, JPEG, GIF, WebP or BMP); you can also paste or drop them in the message" aria-label="Attach pictures">Attach</button>
    <select id="mode" title="Mode: Plan reads and thinks without changing anything, and answers with a plan" aria-label="Mode"></select>
    <span id="state"></span>
    <button id="stop" class="secondary" title="Stop the run (Zero: Cancel)" hidden>Stop</button>
    <button id="send" title="Send (Enter)">Send</button>
  </div>
</footer>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }
}

function makeNonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 32; i++) s += chars.charAt(Math.floor(Math.random() * chars.length));
  return s;
}

/**
 * Reads picture files for the composer: each checked by its name and size
 * before it is read (refusal), at most MAX_ATTACHMENTS.
 */
async function readPictures(uris: readonly vscode.Uri[]): Promise<{ attachments: PendingAttachment[]; errors: string[] }> {
  const attachments: PendingAttachment[] = [];
  const errors: string[] = [];
  for (const uri of uris) {
    const name = path.posix.basename(uri.path) || uri.toString();
    if (attachments.length >= MAX_ATTACHMENTS) {
      errors.push(`At most ${MAX_ATTACHMENTS} pictures go with one message: ${name} was not added.`);
      continue;
    }
    try {
      const st = await vscode.workspace.fs.stat(uri);
      if ((st.type & vscode.FileType.Directory) !== 0) {
        errors.push(`${name} is a folder, not a picture.`);
        continue;
      }
      const why = refusal({ name, type: imageType(name), size: st.size });
      if (why) {
        errors.push(why);
        continue;
      }
      const bytes = await vscode.workspace.fs.readFile(uri);
      const again = refusal({ name, type: imageType(name), size: bytes.byteLength });
      if (again) {
        errors.push(again);
        continue;
      }
      attachments.push({ name, mimeType: imageType(name), data: Buffer.from(bytes).toString('base64'), size: bytes.byteLength });
    } catch (err) {
      errors.push(`${name} could not be read: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { attachments, errors };
}

/** Resolves a diff's path against the session's workspace. */
export function resolvePath(p: string): vscode.Uri {
  if (path.isAbsolute(p)) return vscode.Uri.file(p);
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? vscode.Uri.joinPath(folder.uri, p) : vscode.Uri.file(path.resolve(p));
}
