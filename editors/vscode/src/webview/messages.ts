// The messages between the extension and the Zero view's script.

import type { PendingAttachment } from '../attachments';
import type { Block, Status } from '../model';
import type { AnswerAction, AnswerValue, Command, Mode, SessionInfo } from '../protocol';

export type ToView =
  | { type: 'reset'; session: string | null; blocks: Block[]; status: Status | null }
  | { type: 'patch'; session: string | null; blocks: Block[]; status: Status }
  | {
      type: 'server';
      state: 'stopped' | 'starting' | 'ready' | 'failed';
      message: string;
      sessions: SessionInfo[];
      current: string | null;
      /** The modes the server offers, and the mode of the current session (or of the next one). */
      modes: Mode[];
      mode: string;
    }
  /** The saved commands, for the / menu. */
  | { type: 'commands'; commands: Command[] }
  /** A picture an event names (zero/image), as a data: URL, or why there is none. */
  | { type: 'image'; sha256: string; url?: string; error?: string }
  /** Pictures read for the composer (Attach, a drop from the Explorer), and why others were not. */
  | { type: 'attachments'; attachments: PendingAttachment[]; errors: string[] }
  /** The server refused a message (a bad picture): it goes back to the composer. */
  | { type: 'sendFailed'; text: string; attachments: PendingAttachment[]; message: string }
  /** The server refused an answer to a question (a value the form does not take, or it no longer waits). */
  | { type: 'answerFailed'; id: string; message: string };

export type FromView =
  | { type: 'ready' }
  | { type: 'commands' }
  | { type: 'send'; text: string; attachments?: PendingAttachment[] }
  /** Attach: pick picture files. */
  | { type: 'pickAttachments' }
  /** Files dropped from the Explorer (their URIs), to attach. */
  | { type: 'attachUris'; uris: string[] }
  /** The data of a picture an event of the session names. */
  | { type: 'image'; session: string; sha256: string }
  | { type: 'cancel' }
  /** Undo: back to the newest checkpoint (zero/undo). */
  | { type: 'undo' }
  /** Rewind…: back to a checkpoint, asking what to take back. */
  | { type: 'rewind'; checkpoint: number }
  | { type: 'approve'; id: string; approve: boolean; always: boolean }
  /** The person's answer to a server's question (zero/answer). */
  | { type: 'answer'; id: string; action: AnswerAction; content?: Record<string, AnswerValue> }
  /** Open the page a waiting question asks for (the extension takes its URL from the question, http(s) only). */
  | { type: 'openQuestionPage'; id: string }
  /** Log in to an MCP server: `zero mcp login NAME` in a terminal. */
  | { type: 'mcpLogin'; name: string }
  | { type: 'newSession' }
  | { type: 'setMode'; mode: string }
  | { type: 'switch'; id: string }
  | { type: 'renameSession'; id: string }
  | { type: 'deleteSession'; id: string }
  | { type: 'refreshSessions' }
  | { type: 'restart' }
  | { type: 'command'; command: string }
  | { type: 'openDiff'; block: string; index: number }
  | { type: 'openFile'; path: string }
  | { type: 'openLink'; href: string };
