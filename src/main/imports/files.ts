/**
 * File plumbing of the importer: reading a file's head for detection, streaming a file through a SHA-256 while
 * it is parsed, splitting text into lines, and walking a folder tree for TensorBoard event files.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';

/** Detection reads this much of a file (the parsers' detectors look at the first ~64 KB). */
export const HEAD_BYTES = 64 * 1024;
/** Streaming chunk size: large enough for throughput, small enough that one chunk's steps stay small. */
export const CHUNK_BYTES = 1024 * 1024;
/** A "line" longer than this (no newline in 16 MB) is not a log line: it is dropped and counted. */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;
export const SKIP_LONG_LINE = 'line over 16 MB';

export async function readHead(path: string, bytes = HEAD_BYTES): Promise<Uint8Array> {
  const fh = await open(path, 'r');
  try {
    const buf = new Uint8Array(bytes);
    let got = 0;
    while (got < bytes) {
      const { bytesRead } = await fh.read(buf, got, bytes - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

export function isZip(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
}

/**
 * Splits decoded text into lines without their terminator (`\n`, and a `\r` before it is stripped): text in,
 * complete lines out; the partial last line waits for the next chunk or `end`.
 */
export class LineSplitter {
  private decoder = new TextDecoder('utf-8');
  private rest = '';
  private dropping = false;
  /** Lines too long to be log lines (see MAX_LINE_CHARS). */
  longLines = 0;

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Uint8Array): void {
    this.text(this.decoder.decode(chunk, { stream: true }));
  }

  private text(t: string): void {
    let s = this.rest.length > 0 ? this.rest + t : t;
    let from = 0;
    for (;;) {
      const nl = s.indexOf('\n', from);
      if (nl < 0) break;
      if (this.dropping) this.dropping = false;
      else this.emit(s, from, nl);
      from = nl + 1;
    }
    s = from === 0 ? s : s.slice(from);
    if (s.length > MAX_LINE_CHARS) {
      if (!this.dropping) this.longLines++;
      this.dropping = true;
      s = '';
    }
    this.rest = s;
  }

  private emit(s: string, from: number, to: number): void {
    const end = to > from && s.charCodeAt(to - 1) === 13 ? to - 1 : to;
    this.onLine(s.slice(from, end));
  }

  /** The last line when the text does not end in a newline. */
  end(): void {
    this.text(this.decoder.decode());
    if (this.rest.length > 0 && !this.dropping) this.emit(this.rest, 0, this.rest.length);
    this.rest = '';
    this.dropping = false;
  }
}

/**
 * Read a whole file in chunks, in order, hashing it: `onChunk` is awaited between chunks (the caller stores
 * what the chunk produced), so memory holds one chunk at a time. Returns the SHA-256 (hex) and the byte count.
 */
export async function streamFile(
  path: string,
  onChunk: (chunk: Uint8Array) => Promise<void> | void,
  onBytes?: (n: number) => void,
): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const stream = createReadStream(path, { highWaterMark: CHUNK_BYTES });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
    await onChunk(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
    onBytes?.(bytes);
  }
  return { sha256: hash.digest('hex'), bytes };
}

export async function sha256File(path: string): Promise<string> {
  return (await streamFile(path, () => undefined)).sha256;
}

/** A folder tree holding more files than `listTree` looks at. */
export class TreeTooLargeError extends Error {
  constructor(
    readonly root: string,
    readonly limit: number,
  ) {
    super(`${root} holds more than ${limit} files; import the run folder itself (the one holding its event files)`);
    this.name = 'TreeTooLargeError';
  }
}

/**
 * A folder tree's regular files, depth first, names sorted (hidden entries skipped), at most `limit` (past it,
 * TreeTooLargeError). A sub-folder that cannot be listed (permission denied, gone meanwhile, /proc's oddities) is
 * left out and counted in `unreadable`; the root itself must be readable.
 */
export async function listTree(root: string, limit = 20_000, unreadable: { count: number } = { count: 0 }): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (e) {
      if (dir === root) throw e;
      unreadable.count++;
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      if (out.length >= limit) throw new TreeTooLargeError(root, limit);
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  await walk(root);
  return out;
}

/** A run folder's display name inside an imported tree: `<root name>/<path below the root>`, or the root's name. */
export function folderLabel(root: string, dir: string, rootName: string): string {
  const rel = relative(root, dir);
  return rel === '' ? rootName : `${rootName}/${rel}`;
}

/**
 * The name a source file's run gets: a TensorBoard event file is named by the folder that holds it, as
 * TensorBoard's run list names runs (`events.out.tfevents.<time>.<host>` says nothing); any other log by its
 * file name.
 */
export function sourceLabel(path: string, format: string | null): string {
  return format === 'tensorboard' ? basename(dirname(resolve(path))) : basename(path);
}
