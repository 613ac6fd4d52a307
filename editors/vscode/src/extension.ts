// The Zero extension: starts `zero lsp` with vscode-languageclient, keeps
// one SessionModel per session from the zero/event notifications, and
// drives the Zero view, the commands and the status-bar item.

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { resolveBinary, serverArgs, serverEnv, startFailure, userPath, type LaunchSettings } from './launch';
import { SessionModel, type PendingApproval, type RunState } from './model';
import { loginCommand, loginName, pageURL, questionNotice, safeName } from './questions';
import {
  ErrorCodes,
  Methods,
  type AnswerAction,
  type AnswerParams,
  type AnswerValue,
  type ApproveParams,
  type Attachment,
  type CheckpointRef,
  type CheckpointsResult,
  type CompactParams,
  type ForkParams,
  type ForkResult,
  type RewindParams,
  type RewindReport,
  type TokenChange,
  type UndoParams,
  type Command,
  type CommandsResult,
  type ImageParams,
  type ImageResult,
  type InitializationOptions,
  type LoadSessionResult,
  type Mode,
  type NewSessionParams,
  type NewSessionResult,
  type PromptParams,
  type PromptResult,
  type Question,
  type RenameSessionParams,
  type SessionParams,
  type SessionInfo,
  type SessionsResult,
  type SetModeParams,
  type TrustState,
  type ZeroCapabilities,
  type ZeroEvent,
} from './protocol';
import { conflictOf, conflictQuestion, conflictsFor, rewindParams, rewindQuestion, type Builtin } from './rewind';
import { ChatViewProvider, DiffContentProvider } from './view';

const SECRET_KEY = 'zero.apiKey';
const STATE_SESSION = 'zero.session';

export type ServerState = 'stopped' | 'starting' | 'ready' | 'failed';

/** Everything the view and the commands act on. */
export class Controller implements vscode.Disposable {
  client?: LanguageClient;
  serverState: ServerState = 'stopped';
  serverMessage = '';
  readonly models = new Map<string, SessionModel>();
  /** Sessions whose events this connection receives (created or loaded here). */
  private readonly tracked = new Set<string>();
  current?: string;
  sessions: SessionInfo[] = [];
  /** The session modes the server offers (its initialize result). */
  modes: Mode[] = [];
  /** The mode the next session is made in, chosen while there is none. */
  private nextMode = 'default';
  private readonly changeEmitter = new vscode.EventEmitter<{ session: string; reset?: boolean }>();
  /** A session's model changed (reset: redraw it all). */
  readonly onDidChange = this.changeEmitter.event;
  private readonly serverEmitter = new vscode.EventEmitter<void>();
  /** The server state, the session list or the current session changed. */
  readonly onDidChangeServer = this.serverEmitter.event;
  private readonly status: vscode.StatusBarItem;
  private stderrTail = '';
  /** The zero binary the server was started with (`zero mcp login` runs it too). */
  private binary?: string;
  private starting?: Promise<boolean>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly context: vscode.ExtensionContext,
    readonly output: vscode.OutputChannel,
  ) {
    this.status = vscode.window.createStatusBarItem('zero.status', vscode.StatusBarAlignment.Left, 50);
    this.status.name = 'Zero';
    this.status.command = 'zero.chat.focus';
    this.updateStatus();
    this.status.show();
    const prev = context.workspaceState.get<string>(STATE_SESSION);
    if (prev) this.current = prev;
  }

  // ---- the server ----

  private settings(): LaunchSettings {
    const c = vscode.workspace.getConfiguration('zero');
    return {
      // Only the user's own value: see userPath (and the setting's
      // application scope, which VS Code reads from the user's settings in
      // local and remote windows alike).
      path: userPath(c.inspect<string>('path')).path,
      model: c.get<string>('model', ''),
      baseUrl: c.get<string>('baseUrl', ''),
      profile: c.get<string>('profile', ''),
      sandbox: c.get<string>('sandbox', ''),
      approval: c.get<string>('approval', ''),
      env: c.get<Record<string, unknown>>('env', {}),
    };
  }

  /** Starts the server unless it runs; resolves to whether it is ready. */
  ensureStarted(): Promise<boolean> {
    if (this.serverState === 'ready' && this.client) return Promise.resolve(true);
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async start(): Promise<boolean> {
    const s = this.settings();
    const notOurs = userPath(vscode.workspace.getConfiguration('zero').inspect<string>('path')).ignored;
    if (notOurs.length > 0) {
      this.output.appendLine(`zero.path in ${notOurs.join(' and ')} is ignored: only your user settings choose the binary Zero starts`);
    }
    const found = resolveBinary(s.path, this.context.extensionPath, process.platform, (p) => fs.existsSync(p));
    const binary = found.path;
    this.binary = binary;
    this.output.appendLine(`binary: ${binary} (${found.why})`);
    const apiKey = await this.context.secrets.get(SECRET_KEY);
    const { env, ignored } = serverEnv(process.env, s, apiKey);
    if (ignored.length > 0) {
      this.output.appendLine(`zero.env: ignored ${ignored.join(', ')} (the API key goes in "Zero: Set API Key"; values must be strings)`);
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    const cwd = folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
    const serverOptions: ServerOptions = {
      command: binary,
      args: serverArgs(s),
      options: { env, ...(cwd ? { cwd } : {}) },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // Approvals are answered in the view with zero/approve, and the view
      // shows the files a tool changed (Open diff): no window/showDocument.
      initializationOptions: { approvals: 'events', showDocuments: false } satisfies InitializationOptions,
      initializationFailedHandler: (err) => {
        this.fail(startFailure(binary, err, this.stderrTail));
        return false;
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Shutdown, handled: true }),
        closed: () => {
          if (this.serverState !== 'stopped') this.fail(startFailure(binary, new Error('the server exited'), this.stderrTail));
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    this.setServer('starting', `${binary} ${serverArgs(s).join(' ')}`);
    this.output.appendLine(`starting ${binary} ${serverArgs(s).join(' ')}${cwd ? ` in ${cwd}` : ''}`);
    const client = new LanguageClient('zero', 'Zero', serverOptions, clientOptions);
    this.client = client;
    this.tracked.clear();
    client.onNotification(Methods.event, (e: ZeroEvent) => this.onEvent(e));
    client.onDidChangeState((ev) => {
      if (ev.newState === State.Stopped && this.client === client && this.serverState === 'ready') {
        this.fail(startFailure(binary, new Error('the server stopped'), this.stderrTail));
      }
    });
    try {
      await client.start();
    } catch (err) {
      this.fail(startFailure(binary, err, this.stderrTail));
      return false;
    }
    const zc = client.initializeResult?.capabilities.experimental as { zero?: ZeroCapabilities } | undefined;
    this.modes = zc?.zero?.modes ?? [];
    // The stderr of the process goes to the output channel; keep its tail to explain failures.
    this.setServer('ready', '');
    await this.refreshSessions();
    if (this.current) {
      const id = this.current;
      if (this.sessions.some((x) => x.id === id)) await this.switchSession(id).catch((e) => this.report(e));
      else this.setCurrent(undefined);
    }
    return true;
  }

  private fail(message: string): void {
    if (this.serverState === 'failed') return;
    this.setServer('failed', message);
    this.output.appendLine(message);
    void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output', 'Retry').then((choice) => {
      if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'zero.');
      if (choice === 'Show Output') this.output.show();
      if (choice === 'Retry') void this.restart();
    });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.ensureStarted();
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    this.serverState = 'stopped';
    if (c) {
      try {
        await c.stop(2000);
      } catch {
        // already gone
      }
    }
    this.setServer('stopped', '');
  }

  private setServer(state: ServerState, message: string): void {
    this.serverState = state;
    this.serverMessage = message;
    this.updateStatus();
    this.serverEmitter.fire();
  }

  /** Keeps the last lines the server wrote (called by the output channel wrapper). */
  noteStderr(text: string): void {
    this.stderrTail = (this.stderrTail + text).slice(-2000);
  }

  private async request<R>(method: string, params: unknown): Promise<R> {
    if (!(await this.ensureStarted()) || !this.client) throw new Error(this.serverMessage || 'Zero: the server is not running');
    return this.client.sendRequest<R>(method, params);
  }

  // ---- events ----

  private onEvent(e: ZeroEvent): void {
    if (!e || typeof e.session !== 'string') return;
    let m = this.models.get(e.session);
    if (!m) {
      m = new SessionModel(e.session);
      this.models.set(e.session, m);
    }
    const before = m.runState;
    const approvals = m.pendingApprovals.length;
    m.apply(e);
    this.changeEmitter.fire({ session: e.session });
    if (e.type === 'mode_changed' && e.session === this.current) this.serverEmitter.fire();
    if (e.session === this.current && (before !== m.runState || approvals !== m.pendingApprovals.length)) this.updateStatus();
    // Only a request still pending after the fold: a replay repeats old ones.
    const pending = e.type === 'approval_requested' ? m.pendingApprovals.find((a) => a.id === e.text) : undefined;
    if (pending) this.approvalRequested(e.session, pending);
    const question = e.type === 'question_requested' && e.question ? m.question(e.question.id) : undefined;
    if (question) this.questionAsked(e.session, question);
    // The list shows a session's title (its first message) from its first run on.
    if (e.type === 'run_started' && !this.sessions.some((x) => x.id === e.session && x.title)) void this.refreshSessions().catch(() => {});
  }

  private readonly notified = new Set<string>();

  /** Tells about an approval with a notification when the view cannot show it. */
  private approvalRequested(session: string, a: PendingApproval): void {
    if (this.notified.has(a.id) || (this.viewVisible() && session === this.current)) return;
    this.notified.add(a.id);
    const what = a.title || a.tool || 'a tool';
    void vscode.window.showWarningMessage(`Zero wants to run: ${what}`, 'Allow', 'Allow always', 'Deny', 'Show').then((choice) => {
      // The view may have answered it meanwhile: then the server refuses a second answer, quietly.
      const still = () => this.models.get(session)?.pendingApprovals.some((p) => p.id === a.id) ?? false;
      if (choice === 'Allow' && still()) void this.approve(a.id, true, false);
      else if (choice === 'Allow always' && still()) void this.approve(a.id, true, true);
      else if (choice === 'Deny' && still()) void this.approve(a.id, false, false);
      else if (choice === 'Show') {
        void this.switchSession(session).then(() => vscode.commands.executeCommand('zero.chat.focus'));
      }
    });
  }

  /**
   * Tells about a server's question with a notification when the view
   * cannot show it. The server's own text stays in the view: a
   * notification would render a link written in it.
   */
  private questionAsked(session: string, q: Question): void {
    if (this.notified.has(q.id) || (this.viewVisible() && session === this.current)) return;
    this.notified.add(q.id);
    void vscode.window.showInformationMessage(questionNotice(q), 'Show').then((choice) => {
      if (choice === 'Show') void this.switchSession(session).then(() => vscode.commands.executeCommand('zero.chat.focus'));
    });
  }

  /** The view was hidden: approvals and questions it showed now wait unseen, so they get a notification. */
  viewHidden(): void {
    const id = this.current;
    if (!id) return;
    for (const a of this.models.get(id)?.pendingApprovals ?? []) this.approvalRequested(id, a);
    for (const q of this.models.get(id)?.pendingQuestions ?? []) this.questionAsked(id, q);
  }

  viewVisible: () => boolean = () => false;

  // ---- sessions ----

  model(id = this.current): SessionModel | undefined {
    return id ? this.models.get(id) : undefined;
  }

  private setCurrent(id: string | undefined): void {
    const prev = this.current;
    this.current = id;
    if (prev !== id) void this.leave(prev);
    void this.context.workspaceState.update(STATE_SESSION, id);
    this.updateStatus();
    this.serverEmitter.fire();
    if (id) this.changeEmitter.fire({ session: id, reset: true });
  }

  async refreshSessions(): Promise<SessionInfo[]> {
    if (!this.client || this.serverState !== 'ready') return this.sessions;
    const res = await this.client.sendRequest<SessionsResult>(Methods.sessions, {});
    this.sessions = [...(res?.sessions ?? [])].sort((a, b) => b.updated.localeCompare(a.updated));
    this.serverEmitter.fire();
    return this.sessions;
  }

  async newSession(): Promise<string> {
    const params: NewSessionParams = {};
    const folders = vscode.workspace.workspaceFolders?.filter((f) => f.uri.scheme === 'file');
    if (folders && folders.length > 0) params.workspaceFolders = folders.map((f) => ({ uri: f.uri.toString(), name: f.name }));
    const mode = this.nextMode;
    if (mode !== 'default') params.mode = mode;
    // Events of the session (sandbox warnings) arrive before the answer.
    const res = await this.request<NewSessionResult>(Methods.newSession, params);
    this.nextMode = 'default';
    this.tracked.add(res.sessionId);
    if (!this.models.has(res.sessionId)) this.models.set(res.sessionId, new SessionModel(res.sessionId, mode));
    this.setCurrent(res.sessionId);
    void this.refreshSessions();
    void this.checkTrust(res.sessionId);
    return res.sessionId;
  }

  async switchSession(id: string): Promise<void> {
    if (!this.tracked.has(id)) {
      // Load it: the server replays its events before the answer.
      this.models.set(id, new SessionModel(id, this.sessions.find((x) => x.id === id)?.mode));
      this.tracked.add(id);
      this.setCurrent(id);
      try {
        await this.request<LoadSessionResult>(Methods.loadSession, { sessionId: id });
      } catch (err) {
        this.tracked.delete(id);
        throw err;
      }
      void this.checkTrust(id);
    }
    this.setCurrent(id);
  }

  /**
   * Lets a session this connection follows go (zero/closeSession) once the
   * view switched away from it, so that another process (the terminal's
   * `zero run --continue`) can open it; it stays stored and loads again
   * when picked. Not while it runs or waits for an approval: closing would
   * cancel the run.
   */
  private async leave(id: string | undefined): Promise<void> {
    if (!id || id === this.current || !this.tracked.has(id)) return;
    if ((this.models.get(id)?.runState ?? 'idle') !== 'idle' || this.sessions.some((x) => x.id === id && x.running)) return;
    this.tracked.delete(id);
    this.models.delete(id);
    await this.closeSession(id);
  }

  private async closeSession(id: string): Promise<void> {
    const client = this.client;
    if (!client || this.serverState !== 'ready') return;
    try {
      await client.sendRequest<null>(Methods.closeSession, { sessionId: id } satisfies SessionParams);
    } catch (err) {
      this.report(err);
    }
  }

  /** Asks for a new title and gives it to the session (zero/renameSession). */
  async renameSession(id = this.current): Promise<void> {
    if (!id) return;
    const info = this.sessions.find((x) => x.id === id);
    const title = await vscode.window.showInputBox({
      prompt: 'Rename the Zero session',
      value: info?.title ?? '',
      validateInput: (v) => (v.trim() === '' ? 'The title cannot be empty' : undefined),
    });
    if (title === undefined || title.trim() === '') return;
    const params: RenameSessionParams = { sessionId: id, title: title.trim() };
    await this.request<null>(Methods.renameSession, params);
    // Renaming a session this connection does not follow opened it here: let it go again.
    if (!this.tracked.has(id) && id !== this.current) await this.closeSession(id);
    await this.refreshSessions();
  }

  /** Deletes a session after a confirmation (zero/deleteSession); deleting the open one starts a new one. */
  async deleteSession(id = this.current): Promise<void> {
    if (!id) return;
    const info = this.sessions.find((x) => x.id === id);
    const name = info?.title ? `"${info.title}"` : 'this session';
    const running = (this.models.get(id)?.runState ?? 'idle') !== 'idle' || info?.running === true;
    const choice = await vscode.window.showWarningMessage(
      `Delete the Zero session ${name}?`,
      { modal: true, detail: `${running ? 'Its run is stopped. ' : ''}Its history is removed and cannot be brought back.` },
      'Delete',
    );
    if (choice !== 'Delete') return;
    await this.request<null>(Methods.deleteSession, { sessionId: id } satisfies SessionParams);
    this.tracked.delete(id);
    this.models.delete(id);
    this.sessions = this.sessions.filter((x) => x.id !== id);
    // The view then shows a new session, created with the first message.
    if (this.current === id) this.setCurrent(undefined);
    else this.serverEmitter.fire();
    await this.refreshSessions();
  }

  /**
   * Sends a message, with the pictures attached to it: starts a run, or,
   * during one, becomes an intervention (zero/prompt does either). A
   * message the server refuses (a bad picture) fails with its
   * invalidParams error before anything runs.
   */
  async send(text: string, attachments: Attachment[] = []): Promise<void> {
    const message = text.trim();
    if (message === '' && attachments.length === 0) return;
    const id = this.current && this.tracked.has(this.current) ? this.current : await this.newSession();
    const params: PromptParams = { sessionId: id, message };
    if (attachments.length > 0) params.attachments = attachments;
    const res = await this.request<PromptResult>(Methods.prompt, params);
    if ((res.stopReason === 'error' || res.stopReason === 'budget') && res.error) void vscode.window.showErrorMessage(`Zero: ${res.error}`);
    void this.refreshSessions();
  }

  // ---- going back: undo, rewind, compact, fork ----

  /** The current session, which this connection follows, or an error saying there is none for what. */
  private followed(what: string): string {
    const id = this.current;
    if (!id || !this.tracked.has(id)) throw new Error(`Zero: there is no session to ${what} yet.`);
    return id;
  }

  /** Runs a built-in command typed in the composer (/undo, /rewind, /compact, /fork). */
  async builtin(b: Builtin): Promise<void> {
    switch (b.name) {
      case 'undo':
        return this.undo();
      case 'rewind':
        return this.rewindRun(b.run);
      case 'compact':
        return this.compact(b.focus);
      case 'fork':
        return this.fork(b.run);
    }
  }

  /** Takes back the newest checkpoint's run (or compaction): zero/undo, asking about the user's own changes. */
  async undo(): Promise<void> {
    const sessionId = this.followed('undo in');
    await this.goBack<UndoParams>(Methods.undo, { sessionId });
  }

  /** Goes back to checkpoint `to` of the current session, asking what to take back. */
  async rewindTo(to: number, ref = this.model()?.checkpoint(to)): Promise<void> {
    const sessionId = this.followed('rewind');
    const c: Pick<CheckpointRef, 'id' | 'run' | 'kind' | 'title' | 'error'> = ref ?? { id: to, run: 0, kind: 'run' };
    const q = rewindQuestion(c);
    const choice = await vscode.window.showWarningMessage(q.message, { modal: true, detail: q.detail }, ...q.choices);
    const params = rewindParams(sessionId, to, choice);
    if (params) await this.goBack<RewindParams>(Methods.rewind, params);
  }

  /** /rewind [RUN]: back to before run RUN (the newest checkpoint without), as zero/checkpoints lists them. */
  async rewindRun(run?: number): Promise<void> {
    const sessionId = this.followed('rewind');
    const { checkpoints } = await this.request<CheckpointsResult>(Methods.checkpoints, { sessionId } satisfies SessionParams);
    const c = run === undefined ? checkpoints[checkpoints.length - 1] : checkpoints.find((x) => x.kind === 'run' && x.run === run);
    if (!c) {
      const runs = checkpoints.filter((x) => x.kind === 'run').map((x) => x.run);
      throw new Error(
        run === undefined
          ? 'Zero: this session has no checkpoint yet (one is taken before each run).'
          : `Zero: there is no checkpoint before run ${run}${runs.length > 0 ? ` (there are before runs ${runs.join(', ')})` : ''}.`,
      );
    }
    await this.rewindTo(c.id, c);
  }

  /**
   * Sends zero/undo or zero/rewind; when files changed outside the agent
   * (the conflict error, nothing changed), asks whether to keep them and
   * sends it again. The rewound event tells the view what happened.
   */
  private async goBack<P extends UndoParams | RewindParams>(method: string, params: P): Promise<RewindReport | undefined> {
    try {
      return await this.request<RewindReport>(method, params);
    } catch (err) {
      const data = conflictOf(err, ErrorCodes.conflict);
      if (!data) throw err;
      const q = conflictQuestion(data);
      const conflicts = conflictsFor(await vscode.window.showWarningMessage(q.message, { modal: true, detail: q.detail }, ...q.choices));
      if (!conflicts) return undefined;
      return this.request<RewindReport>(method, { ...params, conflicts });
    }
  }

  /** /compact [focus]: summarises the current session's conversation now (zero/compact). */
  async compact(focus: string): Promise<void> {
    const sessionId = this.followed('compact');
    const params: CompactParams = { sessionId };
    if (focus !== '') params.focus = focus;
    const ch = await this.request<TokenChange>(Methods.compact, params);
    this.output.appendLine(`compacted ${sessionId}: ${ch.before} → ${ch.after} tokens`);
  }

  /** /fork [RUN]: a new session with the conversation up to the end of RUN (zero/fork), opened in the view. */
  async fork(atRun?: number): Promise<void> {
    const sessionId = this.followed('fork');
    const params: ForkParams = { sessionId };
    if (atRun !== undefined) params.atRun = atRun;
    const res = await this.request<ForkResult>(Methods.fork, params);
    await this.refreshSessions().catch(() => {});
    await this.switchSession(res.sessionId);
  }

  private readonly images = new Map<string, Promise<ImageResult>>();

  /**
   * A picture of a session by the sha256 its events name it by
   * (zero/image); one request for each picture at a time.
   */
  image(session: string, sha256: string): Promise<ImageResult> {
    const key = sha256.toLowerCase();
    let p = this.images.get(key);
    if (!p) {
      const params: ImageParams = { sessionId: session, sha256: key };
      p = this.request<ImageResult>(Methods.image, params).finally(() => this.images.delete(key));
      this.images.set(key, p);
    }
    return p;
  }

  /** The mode of the current session, or of the next one while there is none. */
  currentMode(): string {
    const m = this.current && this.tracked.has(this.current) ? this.model() : undefined;
    return m ? m.currentMode : this.nextMode;
  }

  /** Switches the current session's mode (zero/setMode), or chooses the next session's. */
  async setMode(mode: string): Promise<void> {
    if (this.current && this.tracked.has(this.current)) {
      const params: SetModeParams = { sessionId: this.current, mode };
      await this.request<null>(Methods.setMode, params);
      return; // mode_changed tells the view
    }
    this.nextMode = mode;
    this.serverEmitter.fire();
  }

  /** The saved commands (zero/commands) of the current session's workspace, or of the workspace. */
  async commands(): Promise<Command[]> {
    const params = this.current ? { sessionId: this.current } : {};
    try {
      return (await this.request<CommandsResult>(Methods.commands, params)).commands;
    } catch {
      return []; // an older server, or none running: no saved commands to offer
    }
  }

  async cancel(): Promise<void> {
    if (!this.current) return;
    await this.request<null>(Methods.cancel, { sessionId: this.current });
  }

  async approve(id: string, approve: boolean, always: boolean): Promise<void> {
    const params: ApproveParams = { id, approve, always };
    try {
      await this.request<null>(Methods.approve, params);
    } catch (err) {
      this.report(err);
    }
  }

  /** Answers a server's question (zero/answer); a refusal is thrown for the view to show. */
  async answerQuestion(id: string, action: AnswerAction, content?: Record<string, AnswerValue>): Promise<void> {
    const params: AnswerParams = { id, action };
    if (action === 'accept' && content) params.content = content;
    await this.request<null>(Methods.answer, params);
  }

  /**
   * Opens the page a waiting question of the current session asks for, in
   * the browser: its URL as the server sent it (never one the view sends),
   * http or https only.
   */
  async openQuestionPage(id: string): Promise<void> {
    const q = this.model()?.question(id);
    const url = q ? pageURL(q) : undefined;
    if (!q || !url) throw new Error('Zero: that question no longer waits, or its page is not an http(s) address.');
    await vscode.env.openExternal(vscode.Uri.parse(url, true));
  }

  /**
   * Runs `zero mcp login NAME` in a terminal, with the binary the server
   * runs: the name goes as an argument to the binary itself, never through
   * a shell. Only for a server a notice of the current session told the
   * person to log in to.
   */
  mcpLogin(name: string): void {
    const told = this.model()?.blocks.some((b) => b.kind === 'notice' && loginName(b.text) === name) ?? false;
    const s = this.settings();
    const cmd = told ? loginCommand(this.binary ?? resolveBinary(s.path, this.context.extensionPath, process.platform, (p) => fs.existsSync(p)).path, name) : undefined;
    if (!cmd) {
      this.report(new Error(`Zero: "${safeName(name)}" is not a server this session asked to log in to.`));
      return;
    }
    // The server's environment (zero.env) without the API key: the login
    // finds the same configuration and stores its tokens where the server
    // reads them.
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
    const t = vscode.window.createTerminal({
      name: `Zero: log in to ${name}`,
      ...cmd,
      env: serverEnv({}, s, undefined).env,
      ...(folder ? { cwd: folder.uri } : {}),
    });
    t.show();
  }

  /** Asks the user to trust the workspace's code when the server says it is off. */
  private async checkTrust(id: string): Promise<void> {
    let st: TrustState;
    try {
      st = await this.request<TrustState>(Methods.trust, { sessionId: id });
    } catch {
      return; // the server has no trust store: nothing to ask
    }
    if (st.status !== 'untrusted' && st.status !== 'changed') return;
    const files = (st.files ?? []).slice(0, 12).map((f) => `${f.path}${f.change ? ` (${f.change})` : ''}`);
    const more = (st.files?.length ?? 0) > files.length ? `\n… and ${(st.files?.length ?? 0) - files.length} more` : '';
    const choice = await vscode.window.showWarningMessage(
      st.message || 'This workspace has Zero code (extensions, tools) that is turned off.',
      { modal: true, detail: `Files:\n${files.join('\n')}${more}\n\nTrust exactly these files? Any later change turns them off again.` },
      'Trust',
    );
    if (choice !== 'Trust' || !st.digest) return;
    try {
      await this.request<TrustState>(Methods.trust, { sessionId: id, digest: st.digest });
      void vscode.window.showInformationMessage('Zero: this workspace\'s code is trusted; it runs from the next step on.');
    } catch (err) {
      this.report(err);
    }
  }

  report(err: unknown): void {
    const msg = err instanceof Error ? err.message : String(err);
    this.output.appendLine(`error: ${msg}`);
    void vscode.window.showErrorMessage(msg.startsWith('Zero') ? msg : `Zero: ${msg}`);
  }

  // ---- status bar ----

  private updateStatus(): void {
    const run: RunState = this.model()?.runState ?? 'idle';
    void vscode.commands.executeCommand('setContext', 'zero.running', run !== 'idle');
    void vscode.commands.executeCommand('setContext', 'zero.hasSession', this.current !== undefined);
    if (this.serverState === 'failed') {
      this.status.text = '$(error) Zero';
      this.status.tooltip = this.serverMessage;
      this.status.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      return;
    }
    this.status.backgroundColor = undefined;
    switch (run) {
      case 'running':
        this.status.text = '$(sync~spin) Zero: running';
        this.status.tooltip = 'Zero is working (Zero: Cancel stops it)';
        break;
      case 'waiting_approval':
        this.status.text = '$(bell-dot) Zero: waiting for approval';
        this.status.tooltip = 'Zero waits for you to allow or deny a step';
        this.status.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
      case 'waiting_answer':
        this.status.text = '$(bell-dot) Zero: a question for you';
        this.status.tooltip = 'An MCP server asks you something in the Zero view';
        this.status.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
      default:
        this.status.text = this.serverState === 'starting' ? '$(loading~spin) Zero' : '$(hubot) Zero: idle';
        this.status.tooltip = 'Open the Zero view';
    }
  }

  dispose(): void {
    void this.stop();
    this.status.dispose();
    this.changeEmitter.dispose();
    this.serverEmitter.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** An output channel that also lets the controller see what the server wrote. */
function tapChannel(channel: vscode.OutputChannel, tap: (s: string) => void): vscode.OutputChannel {
  return new Proxy(channel, {
    get(target, prop, receiver) {
      if (prop === 'append' || prop === 'appendLine') {
        return (s: string) => {
          tap(prop === 'appendLine' ? `${s}\n` : s);
          target[prop](s);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

interface SessionItem extends vscode.QuickPickItem {
  id: string;
}

const renameButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Rename' };
const deleteButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete' };

/** The Switch Session… quick pick: pick a session, or rename or delete one with its buttons. */
async function pickSession(c: Controller): Promise<void> {
  const items = (list: SessionInfo[]): SessionItem[] => [
    { label: '$(add) New session', id: '' },
    ...list.map((s) => ({
      label: `${s.id === c.current ? '$(check) ' : ''}${s.title || 'Untitled'}`,
      description: `${s.running ? 'running · ' : ''}${new Date(s.updated).toLocaleString()}`,
      detail: s.id,
      id: s.id,
      buttons: [renameButton, deleteButton],
    })),
  ];
  const qp = vscode.window.createQuickPick<SessionItem>();
  qp.placeholder = 'Switch to a Zero session';
  qp.matchOnDetail = true;
  qp.items = items(c.sessions);
  qp.busy = true;
  void c
    .refreshSessions()
    .then((list) => (qp.items = items(list)))
    .catch((err) => c.report(err))
    .finally(() => (qp.busy = false));
  const picked = await new Promise<SessionItem | undefined>((resolve) => {
    let chosen: SessionItem | undefined;
    qp.onDidAccept(() => {
      chosen = qp.selectedItems[0];
      qp.hide();
    });
    let acting = false;
    qp.onDidTriggerItemButton(async ({ button, item }) => {
      // The input box and the confirmation replace the quick pick; it comes back after.
      acting = true;
      qp.hide();
      try {
        if (button === renameButton) await c.renameSession(item.id);
        else if (button === deleteButton) await c.deleteSession(item.id);
      } catch (err) {
        c.report(err);
      }
      resolve({ label: '', id: '\0again' });
    });
    qp.onDidHide(() => {
      if (!acting) resolve(chosen);
    });
    qp.show();
  });
  qp.dispose();
  if (!picked) return;
  if (picked.id === '\0again') return pickSession(c);
  if (picked.id === '') await c.newSession();
  else await c.switchSession(picked.id);
  await vscode.commands.executeCommand('zero.chat.focus');
}

let controller: Controller | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const raw = vscode.window.createOutputChannel('Zero');
  let ctl: Controller | undefined;
  const output = tapChannel(raw, (s) => ctl?.noteStderr(s));
  ctl = new Controller(context, output);
  controller = ctl;
  const c = ctl;
  context.subscriptions.push(raw, c);

  const diffs = new DiffContentProvider(c);
  const view = new ChatViewProvider(context.extensionUri, c, diffs);
  c.viewVisible = () => view.visible;
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(DiffContentProvider.scheme, diffs),
    vscode.window.registerWebviewViewProvider('zero.chat', view, { webviewOptions: { retainContextWhenHidden: true } }),
  );

  const cmd = (name: string, fn: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(
      vscode.commands.registerCommand(name, async (...args: unknown[]) => {
        try {
          await fn(...args);
        } catch (err) {
          c.report(err);
        }
      }),
    );

  cmd('zero.showOutput', () => raw.show(true));
  cmd('zero.newSession', async () => {
    await vscode.commands.executeCommand('zero.chat.focus');
    await c.newSession();
  });
  cmd('zero.ask', async (arg?: unknown) => {
    const editor = vscode.window.activeTextEditor;
    let text = typeof arg === 'string' ? arg : '';
    if (!text && editor && !editor.selection.isEmpty) {
      const sel = editor.document.getText(editor.selection);
      const rel = vscode.workspace.asRelativePath(editor.document.uri);
      const question = await vscode.window.showInputBox({ prompt: `Ask Zero about the selection in ${rel}`, placeHolder: 'What should Zero do with it? (Enter: explain it)' });
      if (question === undefined) return;
      const lang = editor.document.languageId;
      text = `${question || 'Explain this code.'}\n\n${rel}:${editor.selection.start.line + 1}-${editor.selection.end.line + 1}\n\`\`\`${lang}\n${sel}\n\`\`\``;
    }
    if (!text) {
      const q = await vscode.window.showInputBox({ prompt: 'Ask Zero', placeHolder: 'What should Zero do?' });
      if (!q) return;
      text = q;
    }
    await vscode.commands.executeCommand('zero.chat.focus');
    await c.send(text);
  });
  cmd('zero.cancel', () => c.cancel());
  cmd('zero.setApiKey', async () => {
    const key = await vscode.window.showInputBox({ prompt: 'The API key of your model endpoint (kept in VS Code\'s secret storage, given to Zero as OPENAI_API_KEY)', password: true, ignoreFocusOut: true });
    if (key === undefined) return;
    if (key === '') await context.secrets.delete(SECRET_KEY);
    else await context.secrets.store(SECRET_KEY, key);
    if (c.serverState !== 'stopped') {
      const r = await vscode.window.showInformationMessage('Zero: the API key is saved. Restart the server to use it?', 'Restart');
      if (r === 'Restart') await c.restart();
    }
  });
  cmd('zero.clearApiKey', async () => {
    await context.secrets.delete(SECRET_KEY);
    void vscode.window.showInformationMessage('Zero: the API key is removed.');
  });
  cmd('zero.restart', () => c.restart());
  cmd('zero.sessions', async () => {
    await c.ensureStarted();
    await pickSession(c);
  });
  cmd('zero.undo', () => c.undo());
  cmd('zero.renameSession', (id?: unknown) => c.renameSession(typeof id === 'string' ? id : undefined));
  cmd('zero.deleteSession', (id?: unknown) => c.deleteSession(typeof id === 'string' ? id : undefined));

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration('zero') || c.serverState === 'stopped') return;
      if (e.affectsConfiguration('zero.path') && c.serverState === 'failed') {
        // The binary was not there, and the user just pointed at another.
        await c.restart();
        return;
      }
      const r = await vscode.window.showInformationMessage('Zero: the settings changed. Restart the server to apply them?', 'Restart');
      if (r === 'Restart') await c.restart();
    }),
  );
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
}
