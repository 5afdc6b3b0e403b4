/**
 * What the Import button and the runs table's drop target send: which picked or dropped files go to
 * the main side, which are too large for one API call, and how a result reads. Pure (no DOM) so it is
 * unit-tested; the format itself is always detected on the main side from the content.
 */

/**
 * Largest file sent through one `imports.file` call. The file travels base64 in a JSON body (4/3 of its size)
 * and browser mode's server refuses bodies over 256 MiB (src/main/server/server.ts), so 150 MB leaves room.
 */
export const FILE_LIMIT_BYTES = 150 * 1000 * 1000;

/** Largest folder (sum of the files it would send) imported through the UI; beyond it the CLI streams it. */
export const FOLDER_LIMIT_BYTES = 200 * 1000 * 1000;

export interface PickedFile {
  readonly name: string;
  readonly size: number;
  /** Path inside a picked or dropped folder (`runs/a/events.out.tfevents.1`); '' for a file picked alone. */
  readonly path: string;
}

export interface ImportPlan<F extends PickedFile> {
  /** Files to send, one `imports.file` call each. */
  readonly send: F[];
  /** Files over FILE_LIMIT_BYTES: each needs the CLI or an import by path. */
  readonly tooLarge: F[];
  /** Files of a folder that are not TensorBoard event files (checkpoints, tokenizer files, …): not sent. */
  readonly ignored: number;
  /** Set when nothing is sent because the whole selection needs the CLI (a folder over FOLDER_LIMIT_BYTES). */
  readonly refusal: string | null;
}

/**
 * TensorBoard reads a file as an event file when its base name contains "tfevents" (its event-file loader's
 * own test); a folder is imported the way TensorBoard reads it, so other files in the tree are left alone.
 */
export function isTensorBoardEventFile(name: string): boolean {
  const base = name.slice(name.lastIndexOf('/') + 1);
  return base.includes('tfevents');
}

/** The folder a file sits in within a picked folder ('' at its top). */
export function folderOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/**
 * Splits a selection into what is sent. Files picked one by one (or dropped) are all sent — any log, any
 * bundle. Files that came from a folder (path set) are sent only when they are TensorBoard event files.
 */
export function planImport<F extends PickedFile>(files: readonly F[]): ImportPlan<F> {
  const candidates = files.filter((f) => f.path === '' || isTensorBoardEventFile(f.path));
  const ignored = files.length - candidates.length;
  const fromFolder = files.some((f) => f.path !== '');
  const folderBytes = candidates.filter((f) => f.path !== '').reduce((n, f) => n + f.size, 0);
  if (fromFolder && folderBytes > FOLDER_LIMIT_BYTES) {
    const root = files.find((f) => f.path !== '')!.path.split('/')[0];
    return {
      send: [],
      tooLarge: [],
      ignored,
      refusal: `The folder “${root}” holds ${fmtMb(folderBytes)} of TensorBoard event files, more than the ${fmtMb(FOLDER_LIMIT_BYTES)} the browser sends. Import it where the lab runs with \`arlarena import ${root}\`, or use “Import from a path”.`,
    };
  }
  if (fromFolder && candidates.length === 0) {
    return {
      send: [],
      tooLarge: [],
      ignored,
      refusal: `No TensorBoard event file (a name containing “tfevents”) in the ${files.length} file(s) of this folder. Pick the log files themselves to import other formats.`,
    };
  }
  return {
    send: candidates.filter((f) => f.size <= FILE_LIMIT_BYTES),
    tooLarge: candidates.filter((f) => f.size > FILE_LIMIT_BYTES),
    ignored,
    refusal: null,
  };
}

function fmtMb(bytes: number): string {
  return `${Math.round(bytes / 1e6)} MB`;
}

/** "3 unparsable lines, 1 bad crc" from an importer's `skipped` counts; '' when nothing was skipped. */
export function fmtSkipped(skipped: Readonly<Record<string, number>>): string {
  return Object.entries(skipped)
    .filter(([, n]) => n > 0)
    .map(([why, n]) => `${n} ${why}`)
    .join(', ');
}

/** The base64 payload of a `data:…;base64,` URL (what FileReader.readAsDataURL gives). */
export function dataUrlPayload(url: string): string {
  const i = url.indexOf(';base64,');
  if (i < 0) throw new Error(`not a base64 data URL: ${url.slice(0, 40)}…`);
  return url.slice(i + ';base64,'.length);
}

/** The name a file is sent under: its path inside a folder when it has one (TensorBoard groups runs by folder). */
export function sendName(f: PickedFile): string {
  const n = f.path || f.name;
  return n.length <= 255 ? n : n.slice(n.length - 255);
}

/** One TensorBoard run folder of a picked or dropped tree: its event files go in one `imports.files` call. */
export interface FolderGroup<F extends PickedFile> {
  /** The folder's path inside the pick (`runs/seed1`). */
  readonly folder: string;
  /** Its event files, in name order (TensorBoard's reading order). */
  readonly files: F[];
  readonly bytes: number;
  /** Over FILE_LIMIT_BYTES together: one call cannot carry it (the CLI or an import by path can). */
  readonly tooLarge: boolean;
}

/**
 * What a plan sends, as TensorBoard groups runs: files picked on their own one by one, and the event files of
 * a folder together, one group per directory holding them — so a run whose writer was restarted (two event
 * files in one directory) stays one run. A folder's file too large on its own makes its whole group too large
 * rather than leaving a run with a hole.
 */
export function groupSends<F extends PickedFile>(plan: ImportPlan<F>): { single: F[]; tooLarge: F[]; folders: FolderGroup<F>[] } {
  const byFolder = new Map<string, F[]>();
  for (const f of [...plan.send, ...plan.tooLarge]) {
    if (f.path === '') continue;
    const d = folderOf(f.path);
    byFolder.set(d, [...(byFolder.get(d) ?? []), f]);
  }
  const folders = [...byFolder.entries()].map(([folder, files]) => {
    const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const bytes = sorted.reduce((n, f) => n + f.size, 0);
    return { folder, files: sorted, bytes, tooLarge: bytes > FILE_LIMIT_BYTES };
  });
  return { single: plan.send.filter((f) => f.path === ''), tooLarge: plan.tooLarge.filter((f) => f.path === ''), folders };
}

/**
 * Whether a refused import may be retried with a chosen format: only when the content was read and matched no
 * format (or matched it wrongly). A file that is not there, cannot be read or is too large is no format question:
 * offering "Import as <format>" for "no such file" only led to a second refusal.
 */
export function canForceFormat(code: string): boolean {
  return !['NOT_FOUND', 'UNREADABLE', 'EMPTY', 'TOO_LARGE', 'UNAVAILABLE', 'UNAUTHORIZED', 'PAYLOAD_TOO_LARGE'].includes(code);
}
