/**
 * `arlarena import` / bundles.import: verify a bundle completely, then add its run to the store atomically.
 *
 * Verification (all before anything is written): the zip must be readable (a truncated file is not), every
 * entry path must be safe, manifest.json must parse with a known format and this app's schema version, every
 * listed file must be present with the listed size and SHA-256, no unlisted file may be present, and run.json
 * must be a valid run record. The run is then staged in a hidden folder and renamed into runs/<id> in one step,
 * so a failure leaves nothing half-imported.
 */
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Unzip, UnzipInflate, unzipSync, type UnzipFileInfo } from 'fflate';
import { RunRecord as RunRecordSchema, type RunRecord } from '../../shared/api';
import { writeFileAtomic } from '../store/atomic';
import { CHECKPOINTS_DIR, METRICS_FILE, RUN_FILE, TRAJECTORIES_FILE } from '../store/runFiles';
import type { RunStore } from '../store/runStore';
import { checkpointHashProblem } from '../store/runFiles';
import { PRESET_NAMES, validateConfig } from '../../core/config/index';
import { canonicalJson } from '../../core/training/checkpoint';
import { BUNDLE_FORMAT, BUNDLE_SCHEMA_VERSION, BundleError, BundleManifest, checkEntryPath, sha256Hex } from './manifest';
import { exportedMetricsHash } from './exportBundle';

export interface VerifiedBundle {
  readonly manifest: BundleManifest;
  readonly files: Record<string, Uint8Array>;
  readonly record: RunRecord;
}

const dec = new TextDecoder();

/** Most a bundle may inflate to in total, and its manifest alone (zip bombs). */
const MAX_BUNDLE_INFLATED_BYTES = 1024 * 2 ** 20;
const MAX_MANIFEST_BYTES = 4 * 2 ** 20;
/** Compressed bytes handed to the inflater at a time: what one step can expand to stays in the tens of MB. */
const INFLATE_SLICE = 16 * 1024;

/**
 * The zip's central directory: every entry's name and declared sizes, nothing inflated. A name listed twice is
 * refused (readers disagree on which copy wins).
 */
function listEntries(data: Uint8Array): UnzipFileInfo[] {
  const list: UnzipFileInfo[] = [];
  try {
    unzipSync(data, {
      filter: (f) => {
        list.push({ ...f });
        return false;
      },
    });
  } catch (e) {
    throw new BundleError(`the file is not a readable bundle (truncated or not a zip): ${(e as Error).message}`);
  }
  const counts = new Map<string, number>();
  for (const f of list) counts.set(f.name, (counts.get(f.name) ?? 0) + 1);
  for (const [name, n] of counts)
    if (n > 1) throw new BundleError(`entry "${name}" appears ${n} times in the bundle; refusing an ambiguous bundle`);
  return list;
}

/**
 * Inflate the entries in `limits` (name → most bytes it may inflate to) from the zip's own stream, in small
 * slices with a byte count per entry: one that inflates past its limit stops there and is refused, so a bomb
 * never reaches memory. `strict`: an entry in the stream that is not in `limits`, or appears twice, is refused
 * (the stream must hold what the directory says); otherwise such entries are skipped without inflating.
 */
function inflateEntries(data: Uint8Array, limits: ReadonlyMap<string, number>, strict: boolean): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  const seen = new Set<string>();
  let failure: BundleError | null = null;
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  unzip.onfile = (file) => {
    if (failure) return;
    if (file.name.endsWith('/')) return;
    const limit = limits.get(file.name);
    if (limit === undefined || seen.has(file.name)) {
      if (strict)
        failure = new BundleError(
          `entry "${file.name}" in the zip's data is ${seen.has(file.name) ? 'repeated' : 'not in its directory or manifest'}; refusing a bundle whose parts disagree`,
        );
      return;
    }
    seen.add(file.name);
    const chunks: Uint8Array[] = [];
    let n = 0;
    file.ondata = (err, chunk, final) => {
      if (failure) return;
      if (err) {
        failure = new BundleError(`file "${file.name}" could not be inflated (${err.message}): the bundle is damaged`);
        return;
      }
      n += chunk.length;
      if (n > limit) {
        failure = new BundleError(
          `file "${file.name}" inflates to more than the ${limit} bytes its manifest lists; refusing it (a zip bomb or a damaged bundle)`,
        );
        file.terminate();
        return;
      }
      chunks.push(chunk);
      if (final) {
        const buf = new Uint8Array(n);
        let o = 0;
        for (const c of chunks) {
          buf.set(c, o);
          o += c.length;
        }
        out[file.name] = buf;
      }
    };
    file.start();
  };
  try {
    for (let i = 0; i < data.length && !failure; i += INFLATE_SLICE)
      unzip.push(data.subarray(i, i + INFLATE_SLICE), i + INFLATE_SLICE >= data.length);
  } catch (e) {
    if (!failure) throw new BundleError(`the file is not a readable bundle (truncated or not a zip): ${(e as Error).message}`);
  }
  if (failure) throw failure;
  for (const name of limits.keys()) {
    if (!(name in out))
      throw new BundleError(`file "${name}" is listed in the zip's directory but its data could not be read: the bundle is damaged`);
  }
  return out;
}

export function verifyBundle(data: Uint8Array): VerifiedBundle {
  // Everything is checked against the directory's declared sizes before any file is inflated (7).
  const list = listEntries(data).filter((f) => !(f.name.endsWith('/') && f.originalSize === 0));
  for (const f of list) {
    const bad = checkEntryPath(f.name);
    if (bad) throw new BundleError(`unsafe entry "${f.name}" in the bundle (${bad}); refusing to import`);
  }
  const declared = new Map(list.map((f) => [f.name, f.originalSize]));
  const mSize = declared.get('manifest.json');
  if (mSize === undefined) throw new BundleError('the bundle has no manifest.json; it is not an ARLArena bundle or it was damaged');
  if (mSize > MAX_MANIFEST_BYTES)
    throw new BundleError(`manifest.json declares ${mSize} bytes, more than the ${MAX_MANIFEST_BYTES} a manifest may have; refusing it`);
  const mraw = inflateEntries(data, new Map([['manifest.json', mSize]]), false)['manifest.json'];
  let mobj: unknown;
  try {
    mobj = JSON.parse(dec.decode(mraw));
  } catch (e) {
    throw new BundleError(`manifest.json is not valid JSON: ${(e as Error).message}`);
  }
  const ver = (mobj as { schemaVersion?: unknown })?.schemaVersion;
  if ((mobj as { format?: unknown })?.format !== BUNDLE_FORMAT)
    throw new BundleError(
      `manifest.json: format is ${JSON.stringify((mobj as { format?: unknown })?.format)}, expected "${BUNDLE_FORMAT}"`,
    );
  if (ver !== BUNDLE_SCHEMA_VERSION) {
    const by = (mobj as { app?: { version?: string } }).app?.version;
    throw new BundleError(
      `bundle schema version ${JSON.stringify(ver)} is not supported: this app reads version ${BUNDLE_SCHEMA_VERSION}${by ? ` (the bundle was made by ARLArena Lab ${by})` : ''}`,
    );
  }
  const parsed = BundleManifest.safeParse(mobj);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new BundleError(`manifest.json is malformed at "${i.path.join('.')}": ${i.message}`);
  }
  const manifest = parsed.data;
  for (const p of Object.keys(manifest.files)) {
    const bad = checkEntryPath(p);
    if (bad) throw new BundleError(`manifest lists an unsafe path "${p}" (${bad}); refusing to import`);
  }
  for (const f of list) {
    if (f.name !== 'manifest.json' && !Object.hasOwn(manifest.files, f.name))
      throw new BundleError(`file "${f.name}" is in the bundle but not in its manifest; refusing a bundle with unlisted content`);
  }
  let total = mSize;
  for (const [p, meta] of Object.entries(manifest.files)) {
    const size = declared.get(p);
    if (size === undefined) throw new BundleError(`file "${p}" listed in the manifest is missing from the bundle`);
    if (size !== meta.bytes)
      throw new BundleError(`file "${p}" is ${size} bytes, the manifest says ${meta.bytes}: the bundle was truncated or modified`);
    total += meta.bytes;
  }
  if (total > MAX_BUNDLE_INFLATED_BYTES)
    throw new BundleError(
      `the bundle would inflate to ${total} bytes, more than the ${MAX_BUNDLE_INFLATED_BYTES / 2 ** 20} MiB a bundle may hold; refusing it before inflating`,
    );
  const entries = inflateEntries(
    data,
    new Map([...Object.entries(manifest.files).map(([p, m]) => [p, m.bytes] as const), ['manifest.json', mSize]]),
    true,
  );
  const files: Record<string, Uint8Array> = {};
  for (const [p, meta] of Object.entries(manifest.files)) {
    const d = entries[p];
    if (d.length !== meta.bytes)
      throw new BundleError(`file "${p}" is ${d.length} bytes, the manifest says ${meta.bytes}: the bundle was truncated or modified`);
    if (sha256Hex(d) !== meta.sha256)
      throw new BundleError(`file "${p}" does not match its SHA-256 in the manifest: the bundle was tampered with or corrupted`);
    files[p] = d;
  }
  for (const required of ['run.json', 'metrics.jsonl']) {
    if (!files[required]) throw new BundleError(`the bundle lacks ${required}`);
  }
  let record: RunRecord;
  try {
    const r = RunRecordSchema.safeParse(JSON.parse(dec.decode(files['run.json'])));
    if (!r.success) throw new Error(`${r.error.issues[0].path.join('.')}: ${r.error.issues[0].message}`);
    record = r.data;
  } catch (e) {
    throw new BundleError(`run.json is not a valid run record: ${(e as Error).message}`);
  }
  checkCheckpoints(files);
  checkConfig(record, files['config.json']);
  return { manifest, files, record };
}

/** Each bundled checkpoint's files against the SHA-256 its own meta.json records (a re-hashed manifest does not help). */
function checkCheckpoints(files: Readonly<Record<string, Uint8Array>>): void {
  const byStep = new Map<string, Record<string, Uint8Array>>();
  for (const [p, d] of Object.entries(files)) {
    const m = /^checkpoint\/(step-\d+)\/([^/]+)$/.exec(p);
    if (!m) {
      if (p.startsWith('checkpoint/')) throw new BundleError(`"${p}" is not a checkpoint file (checkpoint/step-N/<file>)`);
      continue;
    }
    const group = byStep.get(m[1]) ?? {};
    group[m[2]] = d;
    byStep.set(m[1], group);
  }
  for (const [step, group] of byStep) {
    const { 'meta.json': metaRaw, ...rest } = group;
    if (!metaRaw) throw new BundleError(`checkpoint ${step} has no meta.json`);
    let meta: { files?: unknown; sha256?: unknown };
    try {
      meta = JSON.parse(dec.decode(metaRaw)) as typeof meta;
    } catch (e) {
      throw new BundleError(`checkpoint ${step}: meta.json is not valid JSON (${(e as Error).message})`);
    }
    // No legacy exemption here: a bundle's checkpoint must prove its own content.
    const problem = checkpointHashProblem(step, meta, rest, false);
    if (problem) throw new BundleError(problem);
  }
}

/**
 * A run config that claims a preset goes through the validation a new run's does (a forged
 * lr = 1e9 used to train); config.json must say the same as run.json. Records without a preset's config
 * (synthetic demo runs, imported external logs) are data only: nothing trains them without validation
 * (reproduce and resume validate before training).
 */
function checkConfig(record: RunRecord, configJson: Uint8Array | undefined): void {
  if (configJson) {
    let c: unknown;
    try {
      c = (JSON.parse(dec.decode(configJson)) as { config?: unknown }).config;
    } catch (e) {
      throw new BundleError(`config.json is not valid JSON: ${(e as Error).message}`);
    }
    if (canonicalJson(c) !== canonicalJson(record.config))
      throw new BundleError('config.json and run.json hold different configs; refusing a bundle that contradicts itself');
  }
  const claimed = [record.preset, record.config.preset].filter((p): p is string => typeof p === 'string');
  if (!claimed.some((p) => PRESET_NAMES.includes(p))) return;
  const issues = validateConfig(record.config);
  if (issues.length > 0)
    throw new BundleError(
      `the bundle's config is not a valid run config: ${issues
        .slice(0, 3)
        .map((i) => i.message)
        .join('; ')}`,
    );
}

export interface ImportResult {
  readonly runId: string;
  readonly name: string;
  readonly originalId: string;
}

/** A run a bundle is already in the lab as, and how it was recognised. */
export interface BundleHolder {
  readonly id: string;
  /** 'same-file': imported from this very bundle file; 'exported-from': the bundled run itself (or a copy of it), same metrics. */
  readonly why: 'same-file' | 'exported-from';
}

/**
 * Runs this bundle is already in the lab as, so importing it would only make a look-alike run under a new id:
 * a run imported from this very bundle file (its SHA-256, recorded as `importedBundle` at import), and the run
 * the bundle was exported from — still here, or a copy imported from another bundle of it — whose metric stream
 * is the bundle's metrics.jsonl (same SHA-256). A run that trained on after the export holds more steps than the
 * bundle: the bundle is then an earlier state of it, and imports as a copy.
 */
export async function bundleHolders(store: RunStore, sha256: string, manifest?: BundleManifest): Promise<BundleHolder[]> {
  const out: BundleHolder[] = [];
  const metrics = manifest?.files['metrics.jsonl'];
  for (const s of await store.listRuns()) {
    const rec = await store.getRun(s.id);
    if (!rec) continue;
    if (rec.importedBundle?.sha256 === sha256) {
      out.push({ id: rec.id, why: 'same-file' });
      continue;
    }
    if (!manifest || !metrics) continue;
    const original = manifest.run.id;
    if (rec.id !== original && rec.importedBundle?.originalId !== original) continue;
    const here = await exportedMetricsHash(join(store.runDir(rec.id), METRICS_FILE));
    if (here.bytes === metrics.bytes && here.sha256 === metrics.sha256) out.push({ id: rec.id, why: 'exported-from' });
  }
  return out;
}

/** Add a bundle's run to the store (`verified`: the bundle as verifyBundle already read it, to skip a second pass). */
export async function importBundle(
  store: RunStore,
  data: Uint8Array,
  verified: VerifiedBundle = verifyBundle(data),
): Promise<ImportResult> {
  const { files, record, manifest } = verified;
  let id = record.id;
  const existing = new Set((await store.listRuns()).map((r) => r.id));
  if (existing.has(id)) id = `${id.slice(0, 52)}-imp-${randomBytes(3).toString('hex')}`;
  const stage = store.newStageDir();
  try {
    await mkdir(stage, { recursive: true });
    const active = record.status === 'running' || record.status === 'paused' || record.status === 'queued';
    const rec: RunRecord = {
      ...record,
      id,
      status: active ? 'interrupted' : record.status,
      tags: record.tags.includes('imported') ? record.tags : [...record.tags, 'imported'],
      updatedAt: new Date().toISOString(),
      alerts: record.alerts.map((a) => ({ ...a, runId: id })),
      importedBundle: { sha256: sha256Hex(data), originalId: manifest.run.id },
    };
    await writeFileAtomic(join(stage, METRICS_FILE), files['metrics.jsonl']);
    await writeFileAtomic(join(stage, TRAJECTORIES_FILE), files['trajectories.jsonl'] ?? new Uint8Array());
    for (const [p, d] of Object.entries(files)) {
      // An imported run's source logs (exportBundle's source/…): kept with the run again.
      const src = /^source\/([^/]+)$/.exec(p);
      if (src) {
        await mkdir(join(stage, 'source'), { recursive: true });
        await writeFileAtomic(join(stage, 'source', src[1]), d);
        continue;
      }
      const m = /^checkpoint\/(step-\d+)\/([^/]+)$/.exec(p);
      if (!m) continue;
      await mkdir(join(stage, CHECKPOINTS_DIR, m[1]), { recursive: true });
      await writeFileAtomic(join(stage, CHECKPOINTS_DIR, m[1], m[2]), d);
    }
    await writeFileAtomic(join(stage, RUN_FILE), JSON.stringify(rec, null, 1));
    await rename(stage, store.runDir(id));
  } catch (e) {
    await rm(stage, { recursive: true, force: true });
    throw e;
  }
  await store.listRuns(); // reconcile: the catalog picks up the new folder
  return { runId: id, name: record.name, originalId: manifest.run.id };
}
