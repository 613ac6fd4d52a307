// The zero/* protocol of `zero lsp`, mirroring the Go structs in
// server/lsp (methods.go, session.go, trust.go), loop/event.go,
// loop/tool.go, loop/compress.go, server/approval.go, server/manager.go,
// server/trust.go and server/catalog.go. JSON names are the Go json tags.
// server/lsp/protocol_test.go checks this file against those Go types.

/** loop.EventType plus the server's own events (approvals, questions, sandbox pulls, checkpoints, rewinds, forks). */
export type EventType =
  | 'run_started'
  | 'turn_started'
  | 'reasoning_delta'
  | 'thoughts_delta'
  | 'headline'
  | 'tool_call'
  | 'tool_started'
  | 'tool_output_delta'
  | 'tool_result'
  | 'intervention'
  | 'response_delta'
  | 'response'
  | 'warning'
  | 'error'
  | 'subordinate_started'
  | 'subordinate_ended'
  | 'usage'
  | 'run_ended'
  | 'history_compressed'
  | 'approval_requested'
  | 'approval_resolved'
  | 'question_requested'
  | 'question_resolved'
  | 'sandbox_pull'
  | 'mode_changed'
  | 'plan'
  | 'checkpoint'
  | 'rewound'
  | 'forked';

/** loop.Stop* (run_ended.stop_reason); zero/prompt adds "intervened". */
export type StopReason = 'response' | 'cancelled' | 'error' | 'budget' | 'intervened';

/** loop.Tool* (tool_result.status). */
export type ToolStatus = 'completed' | 'failed' | 'cancelled';

/** server.Pull* (sandbox_pull.status): item is the tool call waiting for the image, text where the pull is. */
export type PullStatus = 'pulling' | 'pulled' | 'failed';

/** server.Approval* (approval_resolved.status). */
export type ApprovalStatus = 'approved' | 'denied' | 'cancelled';

/** loop.FileDiff: old_text is null when the file was created. */
export interface FileDiff {
  path: string;
  old_text: string | null;
  new_text: string;
}

/**
 * server.Usage: one model call's (usage event: role set) or totals (run_ended: the run's;
 * SessionInfo: the session's), with parts by role. cost is in the endpoint's or the configured
 * prices' currency and absent when unknown; cost_partial: some calls' cost is unknown.
 */
export interface Usage {
  role?: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens?: number;
  cost?: number;
  cost_partial?: boolean;
  calls?: number;
  estimated?: boolean;
  roles?: UsageByRole;
}

/** server.UsageCount: a Usage without roles (a role's part of totals). */
export interface UsageCount {
  role?: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens?: number;
  cost?: number;
  cost_partial?: boolean;
  calls?: number;
  estimated?: boolean;
}

/** server.UsageByRole: totals by the model's role. */
export interface UsageByRole {
  chat?: UsageCount;
  utility?: UsageCount;
  embedding?: UsageCount;
}

/** server.PlanItem: status pending | in_progress | completed; priority high | medium | low. */
export interface PlanItem {
  content: string;
  status: string;
  priority?: string;
}

/** server.Plan: an agent's whole plan (the plan event, from todo:write); it replaces the agent's last. */
export interface Plan {
  items: PlanItem[];
}

/** loop.TokenChange. */
export interface TokenChange {
  before: number;
  after: number;
}

/**
 * server.ImageRef: a picture of a user message (run_started, intervention)
 * or of a tool result (tool_result), named by the SHA-256 of its data;
 * zero/image {sessionId, sha256} gives the data. width and height are in
 * pixels, as the model was sent it (scaled down).
 */
export interface ImageRef {
  mime: string;
  sha256: string;
  width?: number;
  height?: number;
  name?: string;
}

/**
 * server.Event, the params of the zero/event notification. Fields tagged
 * omitempty in Go are optional here.
 *
 * For approval_requested: item is the tool call's item, text the request
 * id, tool/method/args/title the call. For approval_resolved: text is the
 * request id, status an ApprovalStatus, error the reason of a refusal.
 *
 * For question_requested (an MCP server asks the person during a run):
 * text is the question's id, title the server, question the question;
 * zero/answer answers it. For question_resolved: text is the id, status
 * an AnswerAction. What the person filled in is never in an event.
 */
export interface ZeroEvent {
  v: number; // the event's version (server.EventVersion): 1
  seq: number;
  session: string;
  agent: number;
  item?: string;
  type: EventType | string; // unknown future types are tolerated
  time: string;
  text?: string;
  iteration?: number;
  tool?: string;
  method?: string;
  args?: unknown;
  kind?: string;
  title?: string;
  status?: string;
  /**
   * On a tool_result: what the tool started goes on after the call
   * returned (a command still running in its shell); status says how the
   * call itself went.
   */
  running?: boolean;
  /**
   * On a tool_result: how many bytes (UTF-8) at the start of text the
   * call's tool_output_delta events showed already.
   */
  streamed?: number;
  diffs?: FileDiff[];
  /** The pictures of a run_started's or an intervention's message, or a tool_result's. */
  images?: ImageRef[];
  profile?: string;
  usage?: Usage;
  tokens?: TokenChange;
  plan?: Plan;
  stop_reason?: string;
  error?: string;
  /** On a checkpoint event: the checkpoint taken (before a run, or after a /compact). */
  checkpoint?: CheckpointRef;
  /** On a rewound event: what the rewind did. */
  rewind?: RewindReport;
  /** On a forked event (the first of a fork after the events it copied): the original. */
  fork?: ForkRef;
  /** On a question_requested event: the question. */
  question?: Question;
}

// The question types mirror package ask (ask/ask.go), checked by server/lsp
// TestProtocolTS like the rest.

/** ask.Accept, ask.Decline, ask.Cancel: what the person did (question_resolved.status, zero/answer's action). */
export type AnswerAction = 'accept' | 'decline' | 'cancel';

/** ask.Type*: the type of a form's field. choice is one of options, choices any of them. */
export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'choice' | 'choices';

/** A value of a form: a string (string, choice), a number (number, integer), a boolean, or strings (choices). */
export type AnswerValue = string | number | boolean | string[];

/** ask.Option: value is what is sent, title what is shown. */
export interface QuestionOption {
  value: string;
  title?: string;
}

/**
 * ask.Field: one field of a flat form. default is the asker's (filled in
 * when the answer leaves the field out); the bounds are absent when none.
 * format is a string's: email, uri, date or date-time.
 */
export interface QuestionField {
  name: string;
  title?: string;
  description?: string;
  type: FieldType | string;
  required?: boolean;
  default?: AnswerValue;
  options?: QuestionOption[];
  format?: string;
  min_length?: number;
  max_length?: number;
  min?: number;
  max?: number;
  min_items?: number;
  max_items?: number;
}

/**
 * ask.Question: what an MCP server (server, its configured name) asks.
 * message is the server's text, untrusted: show it as plain text. A form
 * has fields; a page to open has url (http or https) and no fields; with
 * neither it is a yes or no.
 */
export interface Question {
  id: string;
  session?: string;
  server: string;
  message: string;
  fields?: QuestionField[];
  url?: string;
}

/**
 * zero/answer params (result null): the person's answer to a waiting
 * question, content (the form's values by field name) with accept only. A
 * question no longer waiting fails with requestFailed; a bad action or a
 * value the form does not take, with invalidParams naming the field.
 */
export interface AnswerParams {
  id: string;
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, AnswerValue>;
}

/**
 * server.CheckpointRef: a checkpoint event's checkpoint. kind "run" (taken
 * before run `run`) or "compact" (before a compaction, the conversation
 * only). files and bytes are what its snapshots cover; skipped names what
 * they leave out ("path: why", at most 20); error says why the files are
 * not covered (only the conversation is).
 */
export interface CheckpointRef {
  id: number;
  run: number;
  kind: string;
  title?: string;
  files?: number;
  bytes?: number;
  skipped?: string[];
  partial?: boolean;
  error?: string;
}

/**
 * server.RewindReport: what a rewind did (the rewound event's, and
 * zero/undo's and zero/rewind's result). restored were written back,
 * deleted were created since and removed, kept were changed outside the
 * agent and left as they are, failed could not be restored ("path: why").
 * messages left the conversation. running names processes still running in
 * the sandbox: what they do from now on is not undone.
 */
export interface RewindReport {
  to: number;
  run: number;
  /** "run" or "compact": the checkpoint's kind. */
  kind: string;
  files: boolean;
  conversation: boolean;
  cancelled?: boolean;
  restored?: string[];
  deleted?: string[];
  kept?: string[];
  failed?: string[];
  messages?: number;
  running?: string[];
}

/** server.ForkRef: the session a fork came from, and the run its history ends with. */
export interface ForkRef {
  from: string;
  run: number;
}

/** A protocol.WorkspaceFolder. */
export interface WorkspaceFolder {
  uri: string;
  name: string;
}

/** server.Choice (a profile or a model in the initialize result). */
export interface Choice {
  id: string;
  name: string;
  description?: string;
  backend?: string;
}

/** server.Mode: a session mode (default, plan). */
export interface Mode {
  id: string;
  name: string;
  description: string;
}

/** capabilities.experimental.zero of the initialize result. */
export interface ZeroCapabilities {
  methods: string[];
  profiles?: Choice[];
  models?: Choice[];
  modes: Mode[];
}

/**
 * initializationOptions Zero reads. approvals "events": approvals are
 * answered with zero/approve, not window/showMessageRequest. showDocuments
 * false: the server does not open the files a tool wrote with
 * window/showDocument (the client shows the diffs itself).
 */
export interface InitializationOptions {
  approvals?: 'events';
  showDocuments?: boolean;
}

/** zero/newSession params and result. */
export interface NewSessionParams {
  workspaceFolders?: WorkspaceFolder[];
  profile?: string;
  model?: string;
  mode?: string;
}

/**
 * zero/setMode params (result null): the session's mode from the next tool
 * call on; every client following it gets a mode_changed event (text: the
 * mode). In plan mode only what changes nothing is offered and may run.
 */
/**
 * A saved command (zero/commands answers {commands}): a Markdown file of
 * .zero/commands, .claude/commands or the user's; a zero/prompt whose
 * message is "/name arguments" runs it.
 */
export interface Command {
  name: string;
  description?: string;
  hint?: string;
  source?: string;
}
export interface CommandsResult {
  commands: Command[];
}

export interface SetModeParams {
  sessionId: string;
  mode: string;
}
export interface NewSessionResult {
  sessionId: string;
}

/**
 * A picture attached to a zero/prompt or zero/intervene: data (base64; a
 * data: URL is taken too) with the file's name and the MIME type the
 * client believes (the bytes decide), or path, a file in the session's
 * workspace the server reads. PNG, JPEG, GIF, WebP and BMP, at most 32 MiB
 * each, at most 10 in one message; the server scales them down. A bad one
 * fails the request with invalidParams naming attachments[i] and why.
 */
export interface Attachment {
  name?: string;
  mimeType?: string;
  data?: string;
  path?: string;
}

/** zero/prompt and zero/intervene params: message may be empty when attachments are given. */
export interface PromptParams {
  sessionId: string;
  message: string;
  attachments?: Attachment[];
  workDoneToken?: string | number;
}

/** zero/image params: a picture an event names (ImageRef.sha256) in the session. */
export interface ImageParams {
  sessionId: string;
  sha256: string;
}

/**
 * zero/image result: the picture's data in base64. A picture the session
 * no longer has fails with requestFailed.
 */
export interface ImageResult {
  mimeType: string;
  data: string;
  width: number;
  height: number;
  name?: string;
}

/** lsp.PromptResult. */
export interface PromptResult {
  stopReason: StopReason | string;
  response?: string;
  error?: string;
  run?: number;
  usage?: Usage;
}

/**
 * zero/cancel, zero/loadSession, zero/closeSession and zero/deleteSession
 * params. zero/closeSession (result null) stops following the session and
 * lets it go in this process: it stays stored, and another process (the
 * terminal's `zero run --continue`) may open it. zero/deleteSession (result
 * null) deletes it, open or stored; it fails with invalidParams "unknown
 * session" when there is none, or "open in another zero process".
 */
export interface SessionParams {
  sessionId: string;
}

/** zero/renameSession params (result null): a title the person chose, not blank, kept with the session (SessionInfo.title). */
export interface RenameSessionParams {
  sessionId: string;
  title: string;
}

/** zero/approve params. */
export interface ApproveParams {
  id: string;
  approve: boolean;
  always?: boolean;
  reason?: string;
}

/** zero/sessions params and result. */
export interface SessionsParams {
  workspace?: string;
  all?: boolean;
}
/** server.Info. */
export interface SessionInfo {
  id: string;
  roots?: string[];
  profile?: string;
  model?: string;
  /** "plan"; absent in the default mode. */
  mode?: string;
  title?: string;
  created: string;
  updated: string;
  running: boolean;
  paused?: boolean;
  runs: number;
  last_seq: number;
  usage?: Usage;
}
export interface SessionsResult {
  sessions: SessionInfo[];
}

/** zero/loadSession result, sent after the replay. */
export interface LoadSessionResult {
  sessionId: string;
  events: number;
}

/** zero/trust params: without digest it only reports. */
export interface TrustParams {
  sessionId: string;
  digest?: string;
}
/** server.TrustFile. */
export interface TrustFile {
  path: string;
  kind: string;
  point?: string;
  digest: string;
  /** "added", "changed" or "removed" since last trusted. */
  change?: string;
}
/** server.TrustState. */
export interface TrustState {
  workspace: string;
  status: string;
  digest?: string;
  files?: TrustFile[];
  message?: string;
}

/**
 * A checkpoint of zero/checkpoints (oldest first): what it covers, summed
 * over the workspace roots. skippedMore counts what skipped does not name.
 */
export interface CheckpointInfo {
  id: number;
  run: number;
  kind: string;
  title?: string;
  created: string;
  files: number;
  bytes: number;
  skipped?: string[];
  skippedMore?: number;
  partial?: boolean;
  error?: string;
}
export interface CheckpointsResult {
  checkpoints: CheckpointInfo[];
}

/**
 * zero/undo params (result: RewindReport): back to the newest checkpoint,
 * the last run's (or the last /compact's), files and conversation.
 * conflicts: how to treat files changed outside the agent since (see
 * ConflictData): "keep" or "overwrite"; absent, they fail the request.
 */
export interface UndoParams {
  sessionId: string;
  conflicts?: 'keep' | 'overwrite' | string;
}

/**
 * zero/rewind params (result: RewindReport): to is a checkpoint's id (0 or
 * absent: the newest); files and conversation choose what goes back
 * (neither: both). A run going on is cancelled first.
 */
export interface RewindParams {
  sessionId: string;
  to?: number;
  files?: boolean;
  conversation?: boolean;
  conflicts?: 'keep' | 'overwrite' | string;
}

/**
 * The data of the conflict error (ErrorCodes.conflict) of zero/undo and
 * zero/rewind: files changed outside the agent since checkpoint `to`.
 * Nothing was changed: ask, then send again with conflicts set.
 */
export interface ConflictData {
  conflicts: string[];
  to: number;
}

/** zero/fork params: a new session with the conversation up to the end of run atRun (0 or absent: every run that ended). */
export interface ForkParams {
  sessionId: string;
  atRun?: number;
}
/** zero/fork result: the new session (zero/loadSession follows it). */
export interface ForkResult {
  sessionId: string;
}

/** zero/compact params (result: TokenChange): summarise the history now, focus guiding the summary; /undo takes it back. */
export interface CompactParams {
  sessionId: string;
  focus?: string;
}

/** The request and notification names. */
export const Methods = {
  newSession: 'zero/newSession',
  prompt: 'zero/prompt',
  cancel: 'zero/cancel',
  intervene: 'zero/intervene',
  approve: 'zero/approve',
  answer: 'zero/answer',
  sessions: 'zero/sessions',
  loadSession: 'zero/loadSession',
  closeSession: 'zero/closeSession',
  deleteSession: 'zero/deleteSession',
  renameSession: 'zero/renameSession',
  setMode: 'zero/setMode',
  commands: 'zero/commands',
  image: 'zero/image',
  trust: 'zero/trust',
  checkpoints: 'zero/checkpoints',
  undo: 'zero/undo',
  rewind: 'zero/rewind',
  fork: 'zero/fork',
  compact: 'zero/compact',
  event: 'zero/event',
} as const;

/** LSP error codes the server uses (server/lsp/errors.go). */
export const ErrorCodes = {
  invalidParams: -32602,
  methodNotFound: -32601,
  serverNotInitialized: -32002,
  requestFailed: -32803,
  requestCancelled: -32800,
  /** A rewind met files changed outside the agent; data is ConflictData. */
  conflict: -32010,
} as const;
