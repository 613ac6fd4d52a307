// The event-to-view model: folds one session's zero/event notifications
// into what the Zero view shows. Pure (no VS Code, no DOM), so it is unit
// tested and runs in the extension host.
//
// The view is a flat, chronological list of blocks; a subordinate agent's
// blocks carry its agent number as depth and the id of their subagent
// block as parent, so the view nests them. Blocks only ever get appended
// or updated in place, and every change bumps the block's rev, so a
// renderer can redraw only what changed (see takeChanges). A rewind of the
// conversation does not remove the blocks of the runs it took back: it
// marks them undone.

import type { CheckpointRef, FileDiff, ForkRef, ImageRef, PlanItem, Question, RewindReport, TokenChange, Usage, ZeroEvent } from './protocol';

/** How much of a tool's live output the model keeps (the tail). */
export const MAX_OUTPUT = 256 * 1024;

interface BlockBase {
  /** Stable id: an event item, plus a suffix for the parts of a turn. */
  id: string;
  /** Bumped on every change. */
  rev: number;
  /** The agent number (0 is the user's agent; n+1 is n's subordinate). */
  agent: number;
  /** The id of the subagent block this block belongs to, if any. */
  parent?: string;
  /** The seq of the event that created the block. */
  seq: number;
  /** A rewind took the block's run out of the conversation: the agent no longer knows it. */
  undone?: boolean;
}

/**
 * A checkpoint the session can go back to, on the block it was taken
 * before (a run's message) or after (a compaction's notice). newest: it is
 * the one an undo goes back to.
 */
export interface CheckpointMark {
  ref: CheckpointRef;
  newest: boolean;
}

export interface UserBlock extends BlockBase {
  kind: 'user';
  text: string;
  /** Sent during a run (an intervention) rather than starting one. */
  intervention: boolean;
  /** The pictures attached to the message, by reference (zero/image has their data). */
  images?: ImageRef[];
  /** The checkpoint taken before the run this message started (none for an intervention). */
  checkpoint?: CheckpointMark;
}

export interface ReasoningBlock extends BlockBase {
  kind: 'reasoning';
  text: string;
}

export interface ThoughtsBlock extends BlockBase {
  kind: 'thoughts';
  text: string;
  headline?: string;
}

export type ToolState = 'pending' | 'awaiting_approval' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface ApprovalRef {
  id: string;
  status: 'pending' | 'approved' | 'denied' | 'cancelled';
  reason?: string;
}

export interface ToolBlock extends BlockBase {
  kind: 'tool';
  tool: string;
  method?: string;
  /** The arguments as the server showed them (masked where secret). */
  args?: unknown;
  title?: string;
  toolKind?: string;
  status: ToolState;
  /** Live terminal output (tool_output_delta), the tail of it past MAX_OUTPUT. */
  output: string;
  truncated: boolean;
  /**
   * The tool's result text (tool_result), less the start of it that the
   * live output showed already (tool_result.streamed): for a command, what
   * the tool added to the output, such as a note for the agent.
   */
  result?: string;
  /**
   * The call returned but what it started goes on (tool_result.running):
   * a command still running in its shell, which the agent can wait for,
   * type into or stop. status is how the call went (completed).
   */
  stillRunning?: boolean;
  diffs: FileDiff[];
  /** The pictures the tool brought (tool_result.images), by reference. */
  images?: ImageRef[];
  approval?: ApprovalRef;
  /** The response tool's card: its text is shown as the answer instead. */
  hidden: boolean;
  /**
   * The sandbox image's pull the command waits for (sandbox_pull), in
   * words: its progress while it goes, then that it was pulled. A failed
   * pull is said by the result instead.
   */
  pull?: string;
}

export interface AnswerBlock extends BlockBase {
  kind: 'answer';
  /** Markdown. */
  text: string;
  /** The response event arrived: the text is complete. */
  final: boolean;
}

export interface NoticeBlock extends BlockBase {
  kind: 'notice';
  level: 'info' | 'warning' | 'error';
  text: string;
  tokens?: TokenChange;
  /** A compaction's checkpoint (on its history notice), or a run's without a message. */
  checkpoint?: CheckpointMark;
  /** A rewound event's report. */
  rewind?: RewindReport;
  /** A forked event's original. */
  fork?: ForkRef;
}

export interface SubagentBlock extends BlockBase {
  kind: 'subagent';
  /** The subordinate's own agent number. */
  number: number;
  profile?: string;
  message: string;
  ended: boolean;
  answer?: string;
  error?: string;
}

/** An agent's plan (todo:write): the whole list, updated in place as the agent rewrites it. */
export interface PlanBlock extends BlockBase {
  kind: 'plan';
  items: PlanItem[];
}

/**
 * A question an MCP server asks during the run (question_requested), in
 * the conversation where it was asked. resolved: how it ended (an
 * AnswerAction: answered here or elsewhere, or the run ended); its card
 * goes then.
 */
export interface QuestionBlock extends BlockBase {
  kind: 'question';
  question: Question;
  resolved?: string;
}

export type Block =
  | PlanBlock
  | QuestionBlock
  | UserBlock
  | ReasoningBlock
  | ThoughtsBlock
  | ToolBlock
  | AnswerBlock
  | NoticeBlock
  | SubagentBlock;

export type RunState = 'idle' | 'running' | 'waiting_approval' | 'waiting_answer';

export interface PendingApproval {
  id: string;
  /** The tool call's item (its card's id). */
  item?: string;
  agent: number;
  tool?: string;
  method?: string;
  title?: string;
  args?: unknown;
}

/** The whole view of one session, without the blocks. */
export interface Status {
  session?: string;
  run: RunState;
  /** How many runs started. */
  runs: number;
  /** The stop reason of the last run that ended. */
  lastStop?: string;
  approvals: PendingApproval[];
  usage: { prompt: number; completion: number; total: number; estimated: boolean; last?: Usage };
  lastSeq: number;
  /** The session's mode: "default" or "plan" (mode_changed events). */
  mode: string;
  /** The id of the newest checkpoint (what an undo goes back to), if the view saw it. */
  checkpoint?: number;
}

/** What changed since the last takeChanges. */
export interface Changes {
  /** The blocks created or updated, in list order. */
  blocks: Block[];
  status: Status;
}

export class SessionModel {
  readonly blocks: Block[] = [];
  private readonly index = new Map<string, Block>();
  private readonly changed = new Set<string>();
  private session?: string;
  private run: RunState = 'idle';
  private running = false;
  private runs = 0;
  private lastStop?: string;
  private readonly approvals = new Map<string, PendingApproval>();
  /** The questions waiting for the person, by id. */
  private readonly questions = new Map<string, QuestionBlock>();
  private lastSeq = 0;
  private usage: Status['usage'] = { prompt: 0, completion: 0, total: 0, estimated: false };
  /** The subagent block currently open for each agent number. */
  private readonly subagents = new Map<number, SubagentBlock>();
  /** The latest streamed answer of each agent in the current turn. */
  private readonly answers = new Map<number, AnswerBlock>();
  /** Error texts already shown in the current run (run_ended repeats them). */
  private runErrors = new Set<string>();
  private counter = 0;
  /** The tool cards whose pull is still going (its progress is shown). */
  private readonly pulling = new Set<string>();
  /**
   * The checkpoints a rewind can go back to, by id: the block holding it,
   * and the seq from which blocks belong to what came after it.
   */
  private readonly checkpoints = new Map<number, { block: string; from: number }>();
  /** A run's checkpoint, waiting for its run_started. */
  private nextCheckpoint?: { ref: CheckpointRef; seq: number };

  private mode: string;

  /** mode is the session's mode when it was made or listed ("" or absent: the default). */
  constructor(session?: string, mode?: string) {
    this.session = session;
    this.mode = mode || 'default';
  }

  /** The session's mode: "default" or "plan". */
  get currentMode(): string {
    return this.mode;
  }

  /** Applies a batch of events (a replay, or live ones). */
  applyAll(events: readonly ZeroEvent[]): void {
    for (const e of events) this.apply(e);
  }

  /**
   * Applies one event. Events already seen (seq not above the last one)
   * are ignored, so a replay over a live view changes nothing; events for
   * items never seen create what they need.
   */
  apply(e: ZeroEvent): void {
    if (typeof e !== 'object' || e === null || typeof e.type !== 'string') return;
    if (typeof e.seq === 'number' && e.seq > 0) {
      if (e.seq <= this.lastSeq) return;
      this.lastSeq = e.seq;
    }
    if (this.session === undefined && e.session) this.session = e.session;
    const agent = typeof e.agent === 'number' && e.agent >= 0 ? e.agent : 0;
    const text = e.text ?? '';
    switch (e.type) {
      case 'run_started':
        this.running = true;
        this.runs++;
        this.runErrors = new Set();
        this.answers.clear();
        if (agent === 0) this.subagents.clear();
        if (text !== '' || imagesOf(e).length > 0) {
          const b = this.create<UserBlock>({ kind: 'user', id: this.id(e.item, 'run', e.seq), agent, seq: e.seq, text, intervention: false, ...withImages(e) });
          if (agent === 0 && this.nextCheckpoint) this.hold(b, this.nextCheckpoint.ref, this.nextCheckpoint.seq);
        } else if (agent === 0 && this.nextCheckpoint) {
          const cp = this.nextCheckpoint;
          const n = this.create<NoticeBlock>({ kind: 'notice', id: this.id(undefined, 'checkpoint', cp.seq), agent, seq: cp.seq, level: 'info', text: `Run ${cp.ref.run}` });
          this.hold(n, cp.ref, cp.seq);
        }
        if (agent === 0) this.nextCheckpoint = undefined;
        break;
      case 'intervention':
        this.create<UserBlock>({ kind: 'user', id: this.id(e.item, 'intervention', e.seq), agent, seq: e.seq, text, intervention: true, ...withImages(e) });
        break;
      case 'turn_started':
        this.answers.delete(agent);
        break;
      case 'reasoning_delta': {
        const b = this.ensure<ReasoningBlock>(this.part(e, 'reasoning'), () => ({ kind: 'reasoning', agent, seq: e.seq, text: '' }));
        if (b.kind === 'reasoning') this.update(b, () => (b.text += text));
        break;
      }
      case 'thoughts_delta': {
        const b = this.thoughts(e, agent);
        if (b) this.update(b, () => (b.text += text));
        break;
      }
      case 'headline': {
        const b = this.thoughts(e, agent);
        if (b && text !== '') this.update(b, () => (b.headline = text));
        break;
      }
      case 'response_delta': {
        const b = this.ensure<AnswerBlock>(this.part(e, 'answer'), () => ({ kind: 'answer', agent, seq: e.seq, text: '', final: false }));
        if (b.kind === 'answer') {
          this.update(b, () => (b.text += text));
          this.answers.set(agent, b);
        }
        break;
      }
      case 'response': {
        let b = this.answers.get(agent);
        if (!b) {
          const made = this.ensure<AnswerBlock>(this.part(e, 'answer'), () => ({ kind: 'answer', agent, seq: e.seq, text: '', final: false }));
          if (made.kind !== 'answer') break;
          b = made;
        }
        const a = b;
        this.update(a, () => {
          a.text = text !== '' ? text : a.text;
          a.final = true;
        });
        this.answers.delete(agent);
        break;
      }
      case 'tool_call': {
        const b = this.tool(e, agent);
        if (!b) break;
        this.update(b, () => {
          if (e.tool) b.tool = e.tool;
          if (e.method !== undefined) b.method = e.method;
          if (e.args !== undefined) b.args = e.args;
          if (e.title !== undefined) b.title = e.title;
          if (e.kind !== undefined) b.toolKind = e.kind;
          b.hidden = b.tool === 'response';
        });
        break;
      }
      case 'tool_started': {
        const b = this.tool(e, agent);
        if (b && !isFinished(b.status)) this.update(b, () => (b.status = 'running'));
        break;
      }
      case 'tool_output_delta': {
        const b = this.tool(e, agent);
        if (!b) break;
        this.update(b, () => {
          b.output += text;
          if (b.output.length > MAX_OUTPUT) {
            b.output = b.output.slice(b.output.length - MAX_OUTPUT);
            b.truncated = true;
          }
          if (b.status === 'pending') b.status = 'running';
        });
        break;
      }
      case 'tool_result': {
        const b = this.tool(e, agent);
        if (!b) break;
        this.update(b, () => {
          const st = e.status;
          b.status = st === 'failed' || st === 'cancelled' ? st : 'completed';
          // The text repeats the live output the card shows already;
          // a card that saw none shows it whole.
          const shown = b.output !== '' || b.truncated ? e.streamed : undefined;
          b.result = typeof shown === 'number' && shown > 0 ? text.slice(utf16Offset(text, shown)) : text;
          if (e.running === true) b.stillRunning = true;
          else delete b.stillRunning;
          if (Array.isArray(e.diffs)) b.diffs = e.diffs;
          const images = imagesOf(e);
          if (images.length > 0) b.images = images;
          if (this.pulling.delete(b.id)) delete b.pull; // cut short: the result says why
          b.hidden = b.tool === 'response' && b.status !== 'failed';
        });
        break;
      }
      case 'sandbox_pull': {
        if (text === '' || !e.item) break;
        const b = this.tool(e, agent);
        if (!b) break;
        this.update(b, () => {
          if (e.status === 'failed') delete b.pull;
          else b.pull = text;
          if (e.status === 'pulling') this.pulling.add(b.id);
          else this.pulling.delete(b.id);
          if (b.status === 'pending') b.status = 'running';
        });
        break;
      }
      case 'approval_requested': {
        const id = text;
        if (id === '') break;
        const req: PendingApproval = { id, agent };
        if (e.item) req.item = e.item;
        if (e.tool) req.tool = e.tool;
        if (e.method) req.method = e.method;
        if (e.title) req.title = e.title;
        if (e.args !== undefined) req.args = e.args;
        this.approvals.set(id, req);
        if (e.item) {
          const b = this.tool(e, agent);
          if (b) {
            this.update(b, () => {
              b.approval = { id, status: 'pending' };
              if (!isFinished(b.status)) b.status = 'awaiting_approval';
              if (!b.title && e.title) b.title = e.title;
              if (b.args === undefined && e.args !== undefined) b.args = e.args;
            });
          }
        }
        this.changed.add('');
        break;
      }
      case 'approval_resolved': {
        const id = text;
        const req = this.approvals.get(id);
        this.approvals.delete(id);
        const status = e.status === 'approved' || e.status === 'denied' || e.status === 'cancelled' ? e.status : 'cancelled';
        const item = req?.item ?? e.item;
        const b = item ? this.index.get(item) : undefined;
        if (b && b.kind === 'tool') {
          this.update(b, () => {
            b.approval = { id, status };
            if (e.error) b.approval.reason = e.error;
            if (b.status === 'awaiting_approval') b.status = status === 'approved' ? 'running' : 'pending';
          });
        }
        this.changed.add('');
        break;
      }
      case 'question_requested': {
        const q = e.question;
        if (!q || typeof q !== 'object' || typeof q.id !== 'string' || q.id === '' || this.questions.has(q.id)) break;
        const question: Question = { ...q, server: typeof q.server === 'string' ? q.server : e.title || 'an MCP server', message: typeof q.message === 'string' ? q.message : '' };
        if (!Array.isArray(question.fields)) delete question.fields;
        const b = this.create<QuestionBlock>({ kind: 'question', id: this.id(undefined, `question:${q.id}`, e.seq), agent, seq: e.seq, question });
        this.questions.set(q.id, b);
        this.changed.add('');
        break;
      }
      case 'question_resolved': {
        const b = this.questions.get(text);
        if (!b) break;
        this.questions.delete(text);
        this.update(b, () => (b.resolved = e.status === 'accept' || e.status === 'decline' ? e.status : 'cancel'));
        this.changed.add('');
        break;
      }
      case 'warning':
      case 'error':
        if (e.type === 'error') this.runErrors.add(text);
        this.create<NoticeBlock>({ kind: 'notice', id: this.id(undefined, e.type, e.seq), agent, seq: e.seq, level: e.type, text });
        break;
      case 'history_compressed': {
        const n: Omit<NoticeBlock, 'id' | 'rev'> = { kind: 'notice', agent, seq: e.seq, level: 'info', text: text || 'The history was compressed.' };
        if (e.tokens) n.tokens = e.tokens;
        this.create<NoticeBlock>({ ...n, id: this.id(e.item, 'history', e.seq) });
        break;
      }
      case 'subordinate_started': {
        const b = this.create<SubagentBlock>({
          kind: 'subagent',
          id: this.id(undefined, `agent${agent}`, e.seq),
          // The block sits in the superior's list.
          agent: Math.max(0, agent - 1),
          seq: e.seq,
          number: agent,
          message: text,
          ended: false,
          ...(e.profile ? { profile: e.profile } : {}),
        });
        // A new subordinate of this number retires the older one and its own.
        for (const n of [...this.subagents.keys()]) if (n >= agent) this.subagents.delete(n);
        this.subagents.set(agent, b);
        this.answers.delete(agent);
        break;
      }
      case 'subordinate_ended': {
        const b = this.subagents.get(agent);
        if (b) {
          this.update(b, () => {
            b.ended = true;
            b.answer = text;
            if (e.error) b.error = e.error;
          });
          this.subagents.delete(agent);
        }
        break;
      }
      case 'usage':
        if (e.usage) {
          const u = e.usage;
          this.usage = {
            prompt: this.usage.prompt + (u.prompt_tokens || 0),
            completion: this.usage.completion + (u.completion_tokens || 0),
            total: this.usage.total + (u.total_tokens || 0),
            estimated: this.usage.estimated || !!u.estimated,
            last: u,
          };
          this.changed.add('');
        }
        break;
      case 'plan': {
        const items = Array.isArray(e.plan?.items) ? e.plan!.items.filter((it) => it && typeof it.content === 'string') : [];
        // One list per agent: agent 0's for the session, a subordinate's under its card.
        const owner = agent > 0 ? this.parentOf(agent) : undefined;
        const id = owner ? `${owner.id}:plan` : `plan@agent${agent}`;
        const known = this.index.get(id);
        if (known && known.kind === 'plan') this.update(known, () => (known.items = items));
        else if (!known) this.create<PlanBlock>({ kind: 'plan', id, agent, seq: e.seq, items });
        // The checklist says what the todo:write call did: its card goes.
        const call = e.item ? this.index.get(e.item) : undefined;
        if (call && call.kind === 'tool' && !call.hidden) this.update(call, () => (call.hidden = true));
        break;
      }
      case 'checkpoint': {
        const ref = e.checkpoint;
        if (!ref || typeof ref.id !== 'number') break;
        if (ref.kind === 'compact') {
          // Taken after its history_compressed: the notice just made holds it.
          const last = this.blocks[this.blocks.length - 1];
          if (last && last.kind === 'notice' && last.tokens && !last.checkpoint && !last.undone) this.hold(last, ref, last.seq);
          else {
            const n = this.create<NoticeBlock>({ kind: 'notice', id: this.id(undefined, 'checkpoint', e.seq), agent, seq: e.seq, level: 'info', text: text || 'Checkpoint' });
            this.hold(n, ref, e.seq);
          }
        } else {
          this.nextCheckpoint = { ref, seq: e.seq };
        }
        break;
      }
      case 'rewound': {
        const r = e.rewind;
        const n: Omit<NoticeBlock, 'id' | 'rev'> = { kind: 'notice', agent, seq: e.seq, level: 'info', text: text || 'Rewound.' };
        if (r) n.rewind = r;
        if (r?.conversation) this.rewound(r.to, e.seq);
        this.create<NoticeBlock>({ ...n, id: this.id(undefined, 'rewound', e.seq) });
        break;
      }
      case 'forked': {
        const n: Omit<NoticeBlock, 'id' | 'rev'> = { kind: 'notice', agent, seq: e.seq, level: 'info', text: text || 'Forked.' };
        if (e.fork) n.fork = e.fork;
        this.create<NoticeBlock>({ ...n, id: this.id(undefined, 'forked', e.seq) });
        break;
      }
      case 'mode_changed':
        if (text !== '' && text !== this.mode) {
          this.mode = text;
          this.changed.add('');
        }
        break;
      case 'run_ended': {
        this.running = false;
        this.lastStop = e.stop_reason;
        // Nothing can be waiting once the run is over (an interrupted run
        // replayed on load ends this way too).
        for (const req of this.approvals.values()) {
          const b = req.item ? this.index.get(req.item) : undefined;
          if (b && b.kind === 'tool' && b.approval?.status === 'pending') {
            this.update(b, () => (b.approval = { id: req.id, status: 'cancelled' }));
          }
        }
        this.approvals.clear();
        for (const q of this.questions.values()) this.update(q, () => (q.resolved = 'cancel'));
        this.questions.clear();
        for (const b of this.index.values()) {
          if (b.kind === 'tool' && !isFinished(b.status)) {
            this.update(b, () => (b.status = 'cancelled'));
          }
        }
        for (const s of this.subagents.values()) this.update(s, () => (s.ended = true));
        this.subagents.clear();
        this.answers.clear();
        if (e.stop_reason === 'error' && e.error && !this.runErrors.has(e.error)) {
          this.create<NoticeBlock>({ kind: 'notice', id: this.id(e.item, 'run_error', e.seq), agent, seq: e.seq, level: 'error', text: e.error });
        } else if (e.stop_reason === 'cancelled') {
          this.create<NoticeBlock>({ kind: 'notice', id: this.id(e.item, 'cancelled', e.seq), agent, seq: e.seq, level: 'info', text: 'Cancelled.' });
        }
        break;
      }
      default:
        // Unknown or purely informative (turn_started handled above).
        break;
    }
    const run: RunState = !this.running ? 'idle' : this.approvals.size > 0 ? 'waiting_approval' : this.questions.size > 0 ? 'waiting_answer' : 'running';
    if (run !== this.run) {
      this.run = run;
      this.changed.add('');
    }
  }

  /** The status of the view (run state, approvals, usage). */
  status(): Status {
    const s: Status = {
      run: this.run,
      runs: this.runs,
      approvals: [...this.approvals.values()],
      usage: { ...this.usage },
      lastSeq: this.lastSeq,
      mode: this.mode,
    };
    if (this.session !== undefined) s.session = this.session;
    if (this.lastStop !== undefined) s.lastStop = this.lastStop;
    const newest = this.newestCheckpoint();
    if (newest !== undefined) s.checkpoint = newest;
    return s;
  }

  get runState(): RunState {
    return this.run;
  }

  get pendingApprovals(): PendingApproval[] {
    return [...this.approvals.values()];
  }

  /** The questions waiting for the person, oldest first. */
  get pendingQuestions(): Question[] {
    return [...this.questions.values()].map((b) => b.question);
  }

  /** A question still waiting, by its id. */
  question(id: string): Question | undefined {
    return this.questions.get(id)?.question;
  }

  get seq(): number {
    return this.lastSeq;
  }

  get(id: string): Block | undefined {
    return this.index.get(id);
  }

  /** A checkpoint the session can still go back to, as its event told it. */
  checkpoint(id: number): CheckpointRef | undefined {
    const c = this.checkpoints.get(id);
    const b = c ? this.index.get(c.block) : undefined;
    return b && (b.kind === 'user' || b.kind === 'notice') ? b.checkpoint?.ref : undefined;
  }

  /** The checkpoints the session can still go back to, oldest first. */
  liveCheckpoints(): CheckpointRef[] {
    return [...this.checkpoints.keys()].sort((a, b) => a - b).flatMap((id) => this.checkpoint(id) ?? []);
  }

  private newestCheckpoint(): number | undefined {
    let newest: number | undefined;
    for (const id of this.checkpoints.keys()) if (newest === undefined || id > newest) newest = id;
    return newest;
  }

  /** Puts a checkpoint on the block taken before (or, for a compaction, after) it; from: the seq where what it undoes starts. */
  private hold(b: UserBlock | NoticeBlock, ref: CheckpointRef, from: number): void {
    const before = this.newestCheckpoint();
    // An id comes back after a rewind took its checkpoint: the old holder lets it go.
    const old = this.checkpoints.get(ref.id);
    const oldBlock = old ? this.index.get(old.block) : undefined;
    if (oldBlock && oldBlock !== b && (oldBlock.kind === 'user' || oldBlock.kind === 'notice') && oldBlock.checkpoint) {
      this.update(oldBlock, () => delete oldBlock.checkpoint);
    }
    this.checkpoints.set(ref.id, { block: b.id, from });
    this.update(b, () => (b.checkpoint = { ref, newest: true }));
    if (before !== undefined && before !== ref.id) this.markNewest(before, false);
  }

  private markNewest(id: number, newest: boolean): void {
    const c = this.checkpoints.get(id);
    const b = c ? this.index.get(c.block) : undefined;
    if (b && (b.kind === 'user' || b.kind === 'notice') && b.checkpoint && b.checkpoint.newest !== newest) {
      const cp = b.checkpoint;
      this.update(b, () => (b.checkpoint = { ...cp, newest }));
    }
  }

  /**
   * The conversation went back to checkpoint `to`: the blocks since are
   * marked undone (up to the rewound event at seq), and the checkpoints
   * since are gone.
   */
  private rewound(to: number, seq: number): void {
    const at = this.checkpoints.get(to);
    if (at) {
      for (const b of this.blocks) {
        if (b.seq >= at.from && b.seq < seq && !b.undone) this.update(b, () => (b.undone = true));
      }
    }
    for (const [id, c] of [...this.checkpoints]) {
      if (id < to) continue;
      this.checkpoints.delete(id);
      const b = this.index.get(c.block);
      if (b && (b.kind === 'user' || b.kind === 'notice') && b.checkpoint) this.update(b, () => delete b.checkpoint);
    }
    const newest = this.newestCheckpoint();
    if (newest !== undefined) this.markNewest(newest, true);
    this.changed.add('');
  }

  /** Whether anything changed since the last takeChanges. */
  get dirty(): boolean {
    return this.changed.size > 0;
  }

  /** The blocks changed since the last call, in list order, and the status. */
  takeChanges(): Changes {
    const blocks = this.changed.size === 0 ? [] : this.blocks.filter((b) => this.changed.has(b.id));
    this.changed.clear();
    return { blocks, status: this.status() };
  }

  // ---- helpers ----

  private id(item: string | undefined, part: string, seq: number): string {
    const base = item ? `${item}:${part}` : `${part}#${seq || ++this.counter}`;
    if (!this.index.has(base)) return base;
    let n = 2;
    while (this.index.has(`${base}~${n}`)) n++;
    return `${base}~${n}`;
  }

  /** The id of a part of a turn (its reasoning, thoughts, answer). */
  private part(e: ZeroEvent, part: string): string {
    return e.item ? `${e.item}:${part}` : `${part}@agent${e.agent}`;
  }

  private thoughts(e: ZeroEvent, agent: number): ThoughtsBlock | undefined {
    const b = this.ensure<ThoughtsBlock>(this.part(e, 'thoughts'), () => ({ kind: 'thoughts', agent, seq: e.seq, text: '' }));
    return b.kind === 'thoughts' ? b : undefined;
  }

  /** The card of the tool call of e.item, created if it was never seen. */
  private tool(e: ZeroEvent, agent: number): ToolBlock | undefined {
    const id = e.item || `tool#${e.seq || ++this.counter}`;
    const known = this.index.get(id);
    if (known && known.kind === 'tool' && known.tool === 'tool' && e.tool) {
      known.tool = e.tool; // created by an event without the name
      known.hidden = e.tool === 'response';
    }
    const b = this.ensure<ToolBlock>(id, () => ({
      kind: 'tool',
      agent,
      seq: e.seq,
      tool: e.tool || 'tool',
      status: 'pending',
      output: '',
      truncated: false,
      diffs: [],
      hidden: e.tool === 'response',
    }));
    return b.kind === 'tool' ? b : undefined;
  }

  private ensure<T extends Block>(id: string, make: () => Omit<T, 'id' | 'rev'>): Block {
    return this.index.get(id) ?? this.create<T>({ ...make(), id } as Omit<T, 'rev'>);
  }

  private create<T extends Block>(b: Omit<T, 'rev'>): T {
    const block = { ...b, rev: 1 } as T;
    const parent = this.parentOf(block.kind === 'subagent' ? block.agent : block.agent);
    if (parent && !(block.kind === 'subagent' && parent.number >= (block as SubagentBlock).number)) {
      block.parent = parent.id;
    }
    this.blocks.push(block);
    this.index.set(block.id, block);
    this.changed.add(block.id);
    return block;
  }

  /** The open subagent block agent n's blocks belong in (the nearest one at or below n). */
  private parentOf(n: number): SubagentBlock | undefined {
    for (let k = n; k > 0; k--) {
      const s = this.subagents.get(k);
      if (s) return s;
    }
    return undefined;
  }

  private update(b: Block, fn: () => void): void {
    fn();
    b.rev++;
    this.changed.add(b.id);
  }
}

/** The well-formed picture references of an event. */
export function imagesOf(e: ZeroEvent): ImageRef[] {
  if (!Array.isArray(e.images)) return [];
  return e.images.filter((im) => im && typeof im === 'object' && typeof im.sha256 === 'string' && /^[0-9a-f]{64}$/i.test(im.sha256));
}

function withImages(e: ZeroEvent): { images?: ImageRef[] } {
  const images = imagesOf(e);
  return images.length > 0 ? { images } : {};
}

function isFinished(s: ToolState): boolean {
  return s === 'completed' || s === 'failed' || s === 'cancelled';
}

/**
 * The offset in s (UTF-16 code units, as String.prototype.slice counts) of
 * the byte offset n of s in UTF-8, as Go counts: the server gives byte
 * counts. An n inside a character's bytes goes past that character; an n
 * past the end is s.length.
 */
export function utf16Offset(s: string, n: number): number {
  let bytes = 0;
  let i = 0;
  while (i < s.length && bytes < n) {
    const c = s.codePointAt(i)!;
    // A lone surrogate is a U+FFFD (3 bytes) to Go.
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    i += c > 0xffff ? 2 : 1;
  }
  return i;
}
