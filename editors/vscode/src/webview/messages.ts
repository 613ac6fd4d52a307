// The messages between the extension and the Zero view's script.

import type { Block, Status } from '../model';
import type { Command, Mode, SessionInfo } from '../protocol';

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
  | { type: 'commands'; commands: Command[] };

export type FromView =
  | { type: 'ready' }
  | { type: 'commands' }
  | { type: 'send'; text: string }
  | { type: 'cancel' }
  | { type: 'approve'; id: string; approve: boolean; always: boolean }
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
