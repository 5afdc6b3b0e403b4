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
  /** A tracker's file found by content in a picked or dropped folder (trackerFiles): sent with the other such files. */
  readonly tracker?: boolean;
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
 * bundle. Files that came from a folder (path set) are sent only when they are TensorBoard event files or
 * trackers' run files (`tracker`, found by content).
 */
export function planImport<F extends PickedFile>(files: readonly F[]): ImportPlan<F> {
  const candidates = files.filter((f) => f.path === '' || f.tracker === true || isTensorBoardEventFile(f.path));
  const ignored = files.length - candidates.length;
  const fromFolder = files.some((f) => f.path !== '');
  const folderBytes = candidates.filter((f) => f.path !== '').reduce((n, f) => n + f.size, 0);
  if (fromFolder && folderBytes > FOLDER_LIMIT_BYTES) {
    const root = files.find((f) => f.path !== '')!.path.split('/')[0];
    return {
      send: [],
      tooLarge: [],
      ignored,
      refusal: `The folder “${root}” holds ${fmtMb(folderBytes)} of TensorBoard event files and trackers' run files, more than the ${fmtMb(FOLDER_LIMIT_BYTES)} the browser sends. Import it where the lab runs with \`arlarena import ${root}\`, or use “Import from a path”.`,
    };
  }
  if (fromFolder && candidates.length === 0) {
    return {
      send: [],
      tooLarge: [],
      ignored,
      refusal: `No TensorBoard event file (a name containing “tfevents”) and no tracker's run (W&B, MLflow, Trackio, read from the content) in the ${files.length} file(s) of this folder. Pick the log files themselves to import other formats.`,
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
 * rather than leaving a run with a hole. Trackers' files (`tracker`) from anywhere in the pick go together in one
 * group: the main side lays them out as they were and reads the trackers' runs from them.
 */
export function groupSends<F extends PickedFile>(
  plan: ImportPlan<F>,
): { single: F[]; tooLarge: F[]; folders: FolderGroup<F>[]; trackers: FolderGroup<F> | null } {
  const byFolder = new Map<string, F[]>();
  const tracked: F[] = [];
  for (const f of [...plan.send, ...plan.tooLarge]) {
    if (f.path === '') continue;
    // Trackers' files go together (one call): a resumed W&B run's logs sit in two run folders.
    if (f.tracker) {
      tracked.push(f);
      continue;
    }
    const d = folderOf(f.path);
    byFolder.set(d, [...(byFolder.get(d) ?? []), f]);
  }
  const group = (folder: string, files: readonly F[]): FolderGroup<F> => {
    const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const bytes = sorted.reduce((n, f) => n + f.size, 0);
    return { folder, files: sorted, bytes, tooLarge: bytes > FILE_LIMIT_BYTES };
  };
  const folders = [...byFolder.entries()].map(([folder, files]) => group(folder, files));
  const trackers = tracked.length > 0 ? group(tracked[0].path.split('/')[0], tracked) : null;
  return { single: plan.send.filter((f) => f.path === ''), tooLarge: plan.tooLarge.filter((f) => f.path === ''), folders, trackers };
}

/**
 * Whether a refused import may be retried with a chosen format: only when the content was read and matched no
 * format (or matched it wrongly). A file that is not there, cannot be read or is too large is no format question:
 * offering "Import as <format>" for "no such file" only led to a second refusal.
 */
export function canForceFormat(code: string): boolean {
  return !['NOT_FOUND', 'UNREADABLE', 'EMPTY', 'TOO_LARGE', 'UNAVAILABLE', 'UNAUTHORIZED', 'PAYLOAD_TOO_LARGE'].includes(code);
}

/** How the import panel names a tracker format: W&B's two layouts are W&B runs, MLflow's two stores MLflow runs. */
const TRACKER_NAMES: Readonly<Record<string, string>> = {
  wandb: 'W&B',
  'wandb-files': 'W&B',
  'mlflow-file': 'MLflow',
  'mlflow-sqlite': 'MLflow',
  trackio: 'Trackio',
};

/** The order the panel names trackers in, whatever order the counts arrive in (the main side's is its scan's). */
const TRACKER_ORDER = ['W&B', 'MLflow', 'Trackio'];

/** "3 W&B runs, 1 MLflow run" from an import result's `trackers` counts; '' when no tracker run was found. */
export function trackerSummary(trackers: Readonly<Record<string, number>> | undefined): string {
  if (!trackers) return '';
  const byName = new Map<string, number>();
  for (const [format, n] of Object.entries(trackers)) {
    if (!(n > 0)) continue;
    const name = TRACKER_NAMES[format] ?? format;
    byName.set(name, (byName.get(name) ?? 0) + n);
  }
  const rank = (name: string) => (TRACKER_ORDER.includes(name) ? TRACKER_ORDER.indexOf(name) : TRACKER_ORDER.length);
  return [...byName]
    .sort((a, b) => rank(a[0]) - rank(b[0]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([name, n]) => `${n} ${name} run${n === 1 ? '' : 's'}`)
    .join(', ');
}

/** The sum of several results' tracker counts (the panel's line over every item of one import). */
export function addTrackers(results: readonly (Readonly<Record<string, number>> | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of results) for (const [k, n] of Object.entries(t ?? {})) out[k] = (out[k] ?? 0) + n;
  return out;
}

/**
 * What the first bytes of a file say it is to a tracker, by content (never the name):
 * - 'wandb-log': a W&B transaction log (`:W&B`, magic 0xBEE1); 'database': a SQLite database (MLflow's or
 *   Trackio's store): the file alone is the source;
 * - 'mlflow-run': an MLflow file-store run's meta.yaml (`run_id`, `experiment_id`, `lifecycle_stage` lines): its
 *   folder, everything below it, and its experiment's meta.yaml are the source;
 * - 'wandb-history': an older W&B client's history (a JSON row with `_step` and `_runtime` / `_timestamp`): the
 *   files of its run folder (config.yaml, summary, metadata) are the source;
 * - null: none of these.
 */
export type TrackerSniff = 'wandb-log' | 'database' | 'mlflow-run' | 'wandb-history' | null;

export function sniffTracker(head: Uint8Array): TrackerSniff {
  const starts = (bytes: readonly number[]) => head.length >= bytes.length && bytes.every((b, i) => head[i] === b);
  if (starts([0x3a, 0x57, 0x26, 0x42, 0xe1, 0xbe, 0x00])) return 'wandb-log';
  // "SQLite format 3\0"
  if (starts([0x53, 0x51, 0x4c, 0x69, 0x74, 0x65, 0x20, 0x66, 0x6f, 0x72, 0x6d, 0x61, 0x74, 0x20, 0x33, 0x00])) return 'database';
  const text = new TextDecoder().decode(head);
  if (/^run_id:/m.test(text) && /^experiment_id:/m.test(text) && /^lifecycle_stage:/m.test(text)) return 'mlflow-run';
  const nl = text.indexOf('\n');
  const first = (nl < 0 ? text : text.slice(0, nl)).trim();
  if (first.startsWith('{') && /"_step":\s*\d+\s*[,}]/.test(first) && /"_(runtime|timestamp)":\s*[-\d]/.test(first)) return 'wandb-history';
  return null;
}

/**
 * The files of a picked or dropped folder that belong to trackers' runs, from what `sniff` says of each: the
 * logs and databases themselves, an MLflow run's folder with everything below it and its experiment's meta.yaml,
 * an older W&B run folder's own files. A today's W&B run folder keeps a summary that looks like a history row
 * in files/ below its .wandb log: that folder is the log's run, not an older one. Empty files are left out: they
 * hold nothing to read (wandb 0.9's output.log of a run that printed nothing) and an upload cannot carry them.
 */
export function trackerFiles<F extends PickedFile>(files: readonly F[], sniff: (f: F) => TrackerSniff): Set<F> {
  const out = new Set<F>();
  const trees: string[] = [];
  const flat = new Set<string>();
  const extra = new Set<string>();
  const logDirs: string[] = [];
  for (const f of files) {
    const s = sniff(f);
    if (s === 'wandb-log' || s === 'database') out.add(f);
    if (s === 'wandb-log') logDirs.push(folderOf(f.path));
    else if (s === 'mlflow-run') {
      const dir = folderOf(f.path);
      trees.push(`${dir}/`);
      extra.add(`${folderOf(dir)}/meta.yaml`.replace(/^\//, ''));
    } else if (s === 'wandb-history') flat.add(folderOf(f.path));
  }
  for (const d of [...flat]) if (logDirs.some((l) => d === l || d.startsWith(`${l}/`))) flat.delete(d);
  for (const f of files) {
    if (f.path === '' || f.size === 0) continue;
    if (trees.some((t) => f.path.startsWith(t)) || flat.has(folderOf(f.path)) || extra.has(f.path)) out.add(f);
  }
  return out;
}
