// Going back in a session, the parts without VS Code: the composer's
// built-in slash commands, and the questions the view asks before a
// rewind and when one meets the user's own changes. Pure, so it is unit
// tested.

import type { CheckpointRef, Command, ConflictData, RewindParams } from './protocol';

/** A built-in command typed in the composer. */
export type Builtin =
  | { name: 'undo' }
  | { name: 'rewind'; run?: number }
  | { name: 'compact'; focus: string }
  | { name: 'fork'; run?: number };

/** The built-in commands, for the composer's / menu. They win over saved commands of the same name. */
export const BUILTINS: Command[] = [
  { name: 'undo', description: 'Take back the last run: its file changes and its part of the conversation', source: 'built in' },
  { name: 'rewind', hint: '[RUN]', description: 'Go back to before a run (the last one without RUN), asking what: files, conversation or both', source: 'built in' },
  { name: 'compact', hint: '[FOCUS]', description: 'Summarise the conversation now, FOCUS saying what to keep; /undo takes it back', source: 'built in' },
  { name: 'fork', hint: '[RUN]', description: 'A new session with this conversation up to the end of RUN (all of it without)', source: 'built in' },
];

/**
 * Reads a built-in command: undefined when text is not one (a message, or
 * a saved command), an error saying how to write it when its argument is
 * wrong.
 */
export function parseBuiltin(text: string): Builtin | { error: string } | undefined {
  const m = /^\/(undo|rewind|compact|fork)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  const arg = (m[2] ?? '').trim();
  const run = (usage: string): number | undefined | { error: string } => {
    if (arg === '') return undefined;
    if (!/^\d+$/.test(arg) || Number(arg) < 1) return { error: `${usage}: RUN is a run's number (1, 2, …), not "${arg}".` };
    return Number(arg);
  };
  switch (m[1]) {
    case 'undo':
      return arg === '' ? { name: 'undo' } : { error: `/undo takes no argument (to go further back: /rewind RUN).` };
    case 'compact':
      return { name: 'compact', focus: arg };
    case 'rewind': {
      const r = run('/rewind [RUN]');
      return typeof r === 'object' ? r : r === undefined ? { name: 'rewind' } : { name: 'rewind', run: r };
    }
    case 'fork': {
      const r = run('/fork [RUN]');
      return typeof r === 'object' ? r : r === undefined ? { name: 'fork' } : { name: 'fork', run: r };
    }
  }
  return undefined;
}

/** The answers of the rewind question. */
export const REWIND_BOTH = 'Files and conversation';
export const REWIND_CONVERSATION = 'Conversation only';
export const REWIND_FILES = 'Files only';

/** What a checkpoint lets a rewind take back: its files only when its snapshots cover them. */
export function coversFiles(c: Pick<CheckpointRef, 'kind' | 'error'>): boolean {
  return c.kind === 'run' && !c.error;
}

/** The rewind question for a checkpoint: its message, detail and the answers offered. */
export function rewindQuestion(c: Pick<CheckpointRef, 'id' | 'run' | 'kind' | 'title' | 'error'>): { message: string; detail: string; choices: string[] } {
  if (!coversFiles(c)) {
    const what = c.kind === 'compact' ? 'the compaction' : `run ${c.run}`;
    return {
      message: `Rewind the conversation to before ${what}?`,
      detail: `${c.error ? `Its files cannot go back (${c.error}). ` : ''}The messages since leave the conversation; the agent no longer knows them.`,
      choices: [REWIND_CONVERSATION],
    };
  }
  return {
    message: `Rewind to before run ${c.run}${c.title ? ` ("${c.title}")` : ''}?`,
    detail:
      'Files and conversation: the workspace as it was then and the messages since out of the conversation.\n' +
      'Conversation only: the agent forgets the runs since; the files stay as they are.\n' +
      'Files only: the files go back; the conversation stays.\n\n' +
      'Files you changed yourself since are asked about first.',
    choices: [REWIND_BOTH, REWIND_CONVERSATION, REWIND_FILES],
  };
}

/** zero/rewind's params for an answer of the rewind question (undefined: no answer). */
export function rewindParams(sessionId: string, to: number, choice: string | undefined): RewindParams | undefined {
  switch (choice) {
    case REWIND_BOTH:
      return { sessionId, to, files: true, conversation: true };
    case REWIND_CONVERSATION:
      return { sessionId, to, conversation: true };
    case REWIND_FILES:
      return { sessionId, to, files: true };
  }
  return undefined;
}

/** The answers of the conflict question. */
export const KEEP_MINE = 'Keep my changes';
export const OVERWRITE = 'Overwrite them';

/** The question put when a rewind meets files changed outside the agent. */
export function conflictQuestion(data: ConflictData): { message: string; detail: string; choices: string[] } {
  const paths = Array.isArray(data.conflicts) ? data.conflicts : [];
  const shown = paths.slice(0, 12);
  const more = paths.length > shown.length ? `\n… and ${paths.length - shown.length} more` : '';
  const n = paths.length === 1 ? '1 file was' : `${paths.length} files were`;
  return {
    message: `${n} changed outside Zero since that checkpoint.`,
    detail:
      `${shown.join('\n')}${more}\n\n` +
      `${KEEP_MINE}: they stay as they are; everything else goes back.\n` +
      `${OVERWRITE}: they go back too, and your changes to them are lost.\n\nNothing has been changed yet.`,
    choices: [KEEP_MINE, OVERWRITE],
  };
}

/** The conflicts value for an answer of the conflict question (undefined: cancel). */
export function conflictsFor(choice: string | undefined): 'keep' | 'overwrite' | undefined {
  return choice === KEEP_MINE ? 'keep' : choice === OVERWRITE ? 'overwrite' : undefined;
}

/** Reads a conflict error's data, or undefined when err is not one. */
export function conflictOf(err: unknown, code: number): ConflictData | undefined {
  const e = err as { code?: unknown; data?: unknown } | null;
  if (!e || e.code !== code || typeof e.data !== 'object' || e.data === null) return undefined;
  const d = e.data as Partial<ConflictData>;
  if (!Array.isArray(d.conflicts)) return undefined;
  return { conflicts: d.conflicts.filter((p): p is string => typeof p === 'string'), to: typeof d.to === 'number' ? d.to : 0 };
}

/** One line for a checkpoint: what it covers. */
export function describeCheckpoint(c: CheckpointRef): string {
  if (c.kind === 'compact') return 'Checkpoint before compacting (the conversation)';
  if (c.error) return `Checkpoint · the conversation only`;
  return `Checkpoint · ${c.files ?? 0} file${c.files === 1 ? '' : 's'} (${size(c.bytes ?? 0)})${c.partial ? ', partial' : ''}`;
}

function size(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(1)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} bytes`;
}
