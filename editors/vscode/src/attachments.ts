// The pictures a message carries (zero/prompt's attachments): what the
// view takes (pasted, dropped, picked with Attach) and the limits it
// holds them to before they go, with the words that say why one was not
// taken. Pure (no VS Code, no DOM): the webview and the extension host
// both use it, and it is unit tested.

import type { Attachment } from './protocol';

/** The most pictures one message carries (loop.MaxInputImages). */
export const MAX_ATTACHMENTS = 10;
/** The largest picture, in bytes (vision.MaxSourceBytes). */
export const MAX_ATTACHMENT_BYTES = 32 * 1024 * 1024;
/**
 * The most bytes of pictures one message carries: their base64 must fit in
 * one message to the server (64 MiB), with room for the rest of it.
 */
export const MAX_TOTAL_BYTES = 45 * 1024 * 1024;

/** The picture types the server reads, by file extension. */
export const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
};

/** The extensions of IMAGE_TYPES, for a file picker's filter. */
export const IMAGE_EXTENSIONS = Object.keys(IMAGE_TYPES);

/** A picture waiting in the composer to go with the next message. */
export interface PendingAttachment {
  name: string;
  mimeType: string;
  /** The bytes in base64. */
  data: string;
  /** How many bytes data holds. */
  size: number;
}

/** A file offered to the composer, before it is read. */
export interface OfferedFile {
  name: string;
  /** Its MIME type as the browser or the file's extension says, '' if unknown. */
  type: string;
  size: number;
}

/** The MIME type of a picture file by its name's extension, or ''. */
export function imageType(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : (IMAGE_TYPES[name.slice(dot + 1).toLowerCase()] ?? '');
}

/** Whether the server takes the type: a type it reads, or an unknown one of a file whose name says it does. */
export function isImage(f: Pick<OfferedFile, 'name' | 'type'>): boolean {
  const t = f.type.toLowerCase();
  if (t === '' || t === 'application/octet-stream') return imageType(f.name) !== '';
  return Object.values(IMAGE_TYPES).includes(t);
}

/** The type to send for a file: the browser's when it is a picture's, else by the name. */
export function mimeFor(f: Pick<OfferedFile, 'name' | 'type'>): string {
  const t = f.type.toLowerCase();
  return Object.values(IMAGE_TYPES).includes(t) ? t : imageType(f.name) || t;
}

/** Bytes in words: "512 B", "1.5 KiB", "40.2 MiB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * Why a file offered to the composer is not taken on its own (not a
 * picture, too large), or undefined when it may be.
 */
export function refusal(f: OfferedFile): string | undefined {
  const name = f.name || 'The pasted item';
  if (!isImage(f)) return `${name} is not a picture Zero takes (PNG, JPEG, GIF, WebP or BMP).`;
  if (f.size === 0) return `${name} is empty.`;
  if (f.size > MAX_ATTACHMENT_BYTES) {
    return `${name} is ${formatBytes(f.size)}; a picture may have at most ${formatBytes(MAX_ATTACHMENT_BYTES)}.`;
  }
  return undefined;
}

/** What adding pictures to the composer's gives: the pictures now waiting and why others were not taken. */
export interface Added {
  pending: PendingAttachment[];
  errors: string[];
}

/**
 * Adds pictures to those waiting, in order, as far as the limits allow:
 * each one checked (refusal), at most MAX_ATTACHMENTS and MAX_TOTAL_BYTES
 * in all. What is left out is said, never dropped quietly.
 */
export function addAttachments(pending: readonly PendingAttachment[], incoming: readonly PendingAttachment[]): Added {
  const out = [...pending];
  const errors: string[] = [];
  let total = out.reduce((n, a) => n + a.size, 0);
  for (const a of incoming) {
    const why = refusal({ name: a.name, type: a.mimeType, size: a.size });
    if (why) {
      errors.push(why);
      continue;
    }
    if (out.length >= MAX_ATTACHMENTS) {
      errors.push(`At most ${MAX_ATTACHMENTS} pictures go with one message: ${a.name || 'the pasted picture'} was not added.`);
      continue;
    }
    if (total + a.size > MAX_TOTAL_BYTES) {
      errors.push(`${a.name || 'The pasted picture'} (${formatBytes(a.size)}) was not added: the pictures of one message may have at most ${formatBytes(MAX_TOTAL_BYTES)} in all.`);
      continue;
    }
    out.push(a);
    total += a.size;
  }
  return { pending: out, errors };
}

/** The name of a pasted picture that has none of its own ("image.png" is what browsers call any). */
export function pastedName(name: string, mimeType: string, n: number): string {
  if (name && !/^image\.(png|jpe?g|gif|webp|bmp)$/i.test(name)) return name;
  const ext = Object.entries(IMAGE_TYPES).find(([, t]) => t === mimeType)?.[0] ?? 'png';
  return `pasted image ${n}.${ext}`;
}

/** A data: URL of a picture's base64, only for the types the server sends. */
export function dataURL(mimeType: string, data: string): string | undefined {
  const t = mimeType.toLowerCase();
  if (!Object.values(IMAGE_TYPES).includes(t)) return undefined;
  return `data:${t};base64,${data}`;
}

/** The base64 of a data: URL (FileReader's readAsDataURL), or undefined. */
export function fromDataURL(url: string): { mimeType: string; data: string } | undefined {
  const m = /^data:([^;,]*)(?:;[^;,]*)*;base64,(.*)$/s.exec(url);
  return m ? { mimeType: m[1]!.toLowerCase(), data: m[2]! } : undefined;
}

/** The attachments of zero/prompt. */
export function toParams(pending: readonly PendingAttachment[]): Attachment[] {
  return pending.map((a) => ({ name: a.name, mimeType: a.mimeType, data: a.data }));
}

/**
 * The words of the server's refusal of a message (its invalidParams
 * error) for the person: "attachments[1].data: x.png: not base64" becomes
 * "Picture 2: x.png: not base64".
 */
export function refusedMessage(message: string): string {
  return message
    .replace(/^(Request \S+ failed with message: )?/, '')
    .replace(/^invalid params: /, '')
    .replace(/^attachments\[(\d+)\](?:\.(?:data|path))?: /, (_m, i: string) => `Picture ${Number(i) + 1}: `)
    .replace(/^attachments: /, '');
}
