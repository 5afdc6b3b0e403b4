/**
 * State of the runs table's Import button, drop target and "Follow a log" action: each file sent
 * through `imports.file`, a folder's TensorBoard event files through `imports.files`, one call per directory
 * (the main side detects the format from the content — bundles included), and what came
 * of it, kept as a list the import panel shows: imported (steps, format, skipped), already there (with an
 * "import again"), refused (the importer's message, which names the formats it tried) or too large.
 */
import type { ImportResult } from '../../shared/api';
import type { Lab } from './lab.svelte';
import {
  FILE_LIMIT_BYTES,
  canForceFormat,
  dataUrlPayload,
  fmtSkipped,
  groupSends,
  isTensorBoardEventFile,
  planImport,
  sendName,
  sniffTracker,
  trackerFiles,
  trackerSummary,
  type TrackerSniff,
} from './imports';

export type ImportState = 'sending' | 'imported' | 'duplicate' | 'refused' | 'too-large';

export interface ImportItem {
  readonly key: number;
  /** What the user picked: the file name, its path inside a folder, or the main-side path. */
  readonly label: string;
  readonly state: ImportState;
  readonly result: ImportResult | null;
  /** The importer's refusal (or why the file was not sent), and what to do. */
  readonly message: string | null;
  readonly hint: string | null;
  /** How to send it again: with `again` (a duplicate) or a forced `format` (a refusal). */
  readonly retry: Send | null;
}

/** Options of a repeated import: `again` past the duplicate check, `format` instead of detecting it. */
export interface RetryOptions {
  readonly again?: boolean;
  readonly format?: string;
}

type Send = (opts: RetryOptions) => Promise<Outcome>;

type Outcome = { ok: true; value: ImportResult } | { ok: false; code: string; message: string; hint: string | null };

/** A file to send and its path inside a picked or dropped folder ('' for a file on its own). */
export interface Pick {
  readonly file: File;
  readonly path: string;
}

let nextKey = 1;

export class Importer {
  items = $state.raw<ImportItem[]>([]);
  /** A refusal or note about the whole selection (a folder over the limit, files of a folder left out). */
  note = $state<string | null>(null);
  busy = $state(false);
  /** The formats an import can be forced to (catalog.importFormats), loaded when a refusal first needs them. */
  formats = $state.raw<{ name: string; description: string }[]>([]);

  constructor(private readonly lab: Lab) {}

  readonly sending = $derived(this.items.filter((i) => i.state === 'sending').length);

  clear(): void {
    this.items = [];
    this.note = null;
  }

  /**
   * Sends the picked or dropped files: each file picked on its own in one `imports.file` call, and a folder's
   * TensorBoard event files grouped by the directory holding them, one `imports.files` call (one run) each.
   */
  async importFiles(picks: readonly Pick[]): Promise<void> {
    // Trackers' files in a folder (W&B logs, databases, MLflow runs, older W&B run folders) are found by their
    // first bytes before anything is planned: their names say nothing reliable.
    const picked = picks.map((p) => ({ name: p.file.name, size: p.file.size, path: p.path, pick: p, sniff: null as TrackerSniff }));
    for (const f of picked) if (f.path !== '' && !isTensorBoardEventFile(f.path)) f.sniff = await sniffFile(f.pick.file);
    const tracked = trackerFiles(picked, (f) => f.sniff);
    const plan = planImport(picked.map((f) => (tracked.has(f) ? { ...f, tracker: true } : f)));
    const groups = groupSends(plan);
    this.items = [];
    this.note =
      plan.refusal ??
      (plan.ignored > 0
        ? `${plan.ignored} file(s) of the folder are not TensorBoard event files or trackers' run files and were left out.`
        : null);
    for (const f of groups.tooLarge) {
      this.push({
        label: sendName(f),
        state: 'too-large',
        result: null,
        message: `${sendName(f)} is ${Math.round(f.size / 1e6)} MB, more than the ${Math.round(FILE_LIMIT_BYTES / 1e6)} MB one upload carries.`,
        hint: `Import it where the lab runs: \`arlarena import ${f.name}\`, or enter its path with “Import from a path”.`,
        retry: null,
      });
    }
    const groupsToSend = [...groups.folders, ...(groups.trackers ? [groups.trackers] : [])];
    for (const g of groupsToSend.filter((x) => x.tooLarge)) {
      this.push({
        label: g.folder,
        state: 'too-large',
        result: null,
        message: `${g.folder} holds ${Math.round(g.bytes / 1e6)} MB of ${g === groups.trackers ? "trackers' run files" : 'event files'}, more than the ${Math.round(FILE_LIMIT_BYTES / 1e6)} MB one upload carries.`,
        hint: `Import the folder where the lab runs: \`arlarena import ${g.folder}\`, or enter its path with “Import from a path”.`,
        retry: null,
      });
    }
    const folders = groupsToSend.filter((x) => !x.tooLarge);
    if (groups.single.length === 0 && folders.length === 0) return;
    await this.run(async () => {
      for (const f of groups.single) {
        const send: Send = async ({ again, format }) => {
          const data = await this.read(f);
          if (!data.ok) return data;
          return this.outcome(
            await this.lab.call(
              'imports.file',
              { fileName: sendName(f), dataBase64: data.value, ...(again ? { again: true } : {}), ...(format ? { format } : {}) },
              { quiet: true },
            ),
          );
        };
        await this.attempt(sendName(f), send);
      }
      for (const g of folders) {
        const send: Send = async ({ again, format }) => {
          const files: { fileName: string; dataBase64: string }[] = [];
          for (const f of g.files) {
            const data = await this.read(f);
            if (!data.ok) return data;
            files.push({ fileName: sendName(f), dataBase64: data.value });
          }
          return this.outcome(
            await this.lab.call(
              'imports.files',
              { files, ...(again ? { again: true } : {}), ...(format ? { format } : {}) },
              { quiet: true },
            ),
          );
        };
        await this.attempt(g.folder, send);
      }
    });
  }

  /** A picked file's bytes as base64, or why it could not be sent. */
  private async read(f: {
    pick: Pick;
    name: string;
    path: string;
    size: number;
  }): Promise<{ ok: true; value: string } | { ok: false; code: string; message: string; hint: string | null }> {
    let dataBase64: string;
    try {
      dataBase64 = await readBase64(f.pick.file);
    } catch (e) {
      return {
        ok: false,
        code: 'UNREADABLE',
        message: `${sendName(f)} could not be read: ${e instanceof Error ? e.message : String(e)}`,
        hint: 'Check the file is still there and readable, then try again.',
      };
    }
    if (dataBase64 === '')
      return { ok: false, code: 'EMPTY', message: `${sendName(f)} is empty.`, hint: 'Pick the log file itself, not an empty placeholder.' };
    return { ok: true, value: dataBase64 };
  }

  /** Imports a file or folder on the main side's machine (large logs, TensorBoard trees), named by path (browser mode). */
  async importPath(path: string): Promise<void> {
    await this.importNamed(path, { path });
  }

  /**
   * The desktop app: the main side's native dialog picks the file or folder, and the import names it by the grant
   * the dialog answered (the app refuses a path sent by the window). Cancelling the dialog does nothing.
   */
  async importPicked(kind: 'file' | 'folder'): Promise<void> {
    const picked = await this.lab.call('imports.pick', { kind, purpose: 'import' });
    if (!picked.ok || picked.value === null) return;
    await this.importNamed(picked.value.path, { grant: picked.value.grant });
  }

  private async importNamed(label: string, named: { path: string } | { grant: string }): Promise<void> {
    this.items = [];
    this.note = null;
    await this.run(() =>
      this.attempt(label, async ({ again, format }) =>
        this.outcome(
          await this.lab.call(
            'imports.path',
            { ...named, ...(again ? { again: true } : {}), ...(format ? { format } : {}) },
            { quiet: true },
          ),
        ),
      ),
    );
  }

  /** "Import again" on a duplicate (`again: true`) or "import as" a named format on a refusal. */
  async retry(item: ImportItem, opts: RetryOptions): Promise<void> {
    if (!item.retry) return;
    const send = item.retry;
    await this.run(async () => {
      this.replace(item.key, { state: 'sending', message: null, hint: null });
      this.settle(item.key, await send(opts), send);
    });
  }

  async loadFormats(): Promise<void> {
    if (this.formats.length) return;
    const res = await this.lab.call('catalog.importFormats');
    if (res.ok) this.formats = res.value;
  }

  private async attempt(label: string, send: Send): Promise<void> {
    const key = this.push({ label, state: 'sending', result: null, message: null, hint: null, retry: null });
    this.settle(key, await send({}), send);
  }

  private settle(key: number, out: Outcome, send: Send): void {
    // A refusal keeps its sender: the user may know the format the content did not reveal.
    if (!out.ok)
      this.replace(key, { state: 'refused', message: out.message, hint: out.hint, retry: canForceFormat(out.code) ? send : null });
    else if (out.value.runIds.length === 0 && (out.value.duplicateOf?.length ?? 0) > 0)
      this.replace(key, { state: 'duplicate', result: out.value, retry: send });
    else this.replace(key, { state: 'imported', result: out.value, retry: null });
  }

  private outcome(res: Awaited<ReturnType<Lab['call']>>): Outcome {
    if (res.ok) return { ok: true, value: res.value as ImportResult };
    return { ok: false, code: res.error.code, message: res.error.message, hint: res.error.hint ?? null };
  }

  private async run(work: () => Promise<void>): Promise<void> {
    this.busy = true;
    try {
      await work();
    } finally {
      this.busy = false;
      // New runs (and the alerts their import raised) show at once.
      await Promise.all([this.lab.loadRuns(), this.lab.loadAlerts()]);
    }
  }

  private push(item: Omit<ImportItem, 'key'>): number {
    const key = nextKey++;
    this.items = [...this.items, { ...item, key }];
    return key;
  }

  private replace(key: number, patch: Partial<Omit<ImportItem, 'key'>>): void {
    this.items = this.items.map((i) => (i.key === key ? { ...i, ...patch } : i));
  }
}

/** One line for an imported item: "435 steps (verl-console; skipped 3 unparsable line)". */
export function importedSummary(r: ImportResult): string {
  const skipped = fmtSkipped(r.skipped);
  return `${r.steps} step${r.steps === 1 ? '' : 's'} (${r.format}${skipped ? `; skipped ${skipped}` : ''})`;
}

/** The file's bytes as base64, read natively (FileReader) rather than through a JS string loop. */
function readBase64(file: File): Promise<string> {
  if (file.size === 0) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      try {
        resolve(dataUrlPayload(String(reader.result)));
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    };
    reader.onerror = () => reject(reader.error ?? new Error('read failed'));
    reader.readAsDataURL(file);
  });
}

/**
 * What a picked file is to a tracker, from its first bytes (imports.ts sniffTracker). A W&B history row with a
 * hundred metrics is a few KB: a head that opens a JSON row without ending its line is read further.
 */
async function sniffFile(file: File): Promise<TrackerSniff> {
  try {
    let head = new Uint8Array(await file.slice(0, 4096).arrayBuffer());
    if (head.length === 4096 && head[0] === 0x7b && !head.includes(0x0a))
      head = new Uint8Array(await file.slice(0, 256 * 1024).arrayBuffer());
    return sniffTracker(head);
  } catch {
    // Unreadable here: it is left out like any other file that is no event file.
    return null;
  }
}

/** "found 3 W&B runs, 1 MLflow run" for an import that read trackers' stores; '' for any other. */
export function trackersFound(r: ImportResult): string {
  const s = trackerSummary(r.trackers);
  return s ? `found ${s}` : '';
}
