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
import { unzipSync } from 'fflate';
import { RunRecord as RunRecordSchema, type RunRecord } from '../../shared/api';
import { writeFileAtomic } from '../store/atomic';
import { CHECKPOINTS_DIR, METRICS_FILE, RUN_FILE, TRAJECTORIES_FILE } from '../store/runFiles';
import type { RunStore } from '../store/runStore';
import { BUNDLE_FORMAT, BUNDLE_SCHEMA_VERSION, BundleError, BundleManifest, checkEntryPath, sha256Hex } from './manifest';

export interface VerifiedBundle {
  readonly manifest: BundleManifest;
  readonly files: Record<string, Uint8Array>;
  readonly record: RunRecord;
}

const dec = new TextDecoder();

export function verifyBundle(data: Uint8Array): VerifiedBundle {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(data);
  } catch (e) {
    throw new BundleError(`the file is not a readable bundle (truncated or not a zip): ${(e as Error).message}`);
  }
  for (const p of Object.keys(entries)) {
    if (p.endsWith('/') && entries[p].length === 0) {
      delete entries[p];
      continue;
    }
    const bad = checkEntryPath(p);
    if (bad) throw new BundleError(`unsafe entry "${p}" in the bundle (${bad}); refusing to import`);
  }
  const mraw = entries['manifest.json'];
  if (!mraw) throw new BundleError('the bundle has no manifest.json; it is not an ARLArena bundle or it was damaged');
  let mobj: unknown;
  try {
    mobj = JSON.parse(dec.decode(mraw));
  } catch (e) {
    throw new BundleError(`manifest.json is not valid JSON: ${(e as Error).message}`);
  }
  const ver = (mobj as { schemaVersion?: unknown })?.schemaVersion;
  if ((mobj as { format?: unknown })?.format !== BUNDLE_FORMAT) throw new BundleError(`manifest.json: format is ${JSON.stringify((mobj as { format?: unknown })?.format)}, expected "${BUNDLE_FORMAT}"`);
  if (ver !== BUNDLE_SCHEMA_VERSION) {
    const by = (mobj as { app?: { version?: string } }).app?.version;
    throw new BundleError(`bundle schema version ${JSON.stringify(ver)} is not supported: this app reads version ${BUNDLE_SCHEMA_VERSION}${by ? ` (the bundle was made by ARLArena Lab ${by})` : ''}`);
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
  const files: Record<string, Uint8Array> = {};
  for (const [p, meta] of Object.entries(manifest.files)) {
    const d = entries[p];
    if (!d) throw new BundleError(`file "${p}" listed in the manifest is missing from the bundle`);
    if (d.length !== meta.bytes) throw new BundleError(`file "${p}" is ${d.length} bytes, the manifest says ${meta.bytes}: the bundle was truncated or modified`);
    if (sha256Hex(d) !== meta.sha256) throw new BundleError(`file "${p}" does not match its SHA-256 in the manifest: the bundle was tampered with or corrupted`);
    files[p] = d;
  }
  for (const p of Object.keys(entries)) {
    if (p !== 'manifest.json' && !(p in manifest.files)) throw new BundleError(`file "${p}" is in the bundle but not in its manifest; refusing a bundle with unlisted content`);
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
  return { manifest, files, record };
}

export interface ImportResult {
  readonly runId: string;
  readonly name: string;
  readonly originalId: string;
}

export async function importBundle(store: RunStore, data: Uint8Array): Promise<ImportResult> {
  const { files, record, manifest } = verifyBundle(data);
  let id = record.id;
  const existing = new Set((await store.listRuns()).map((r) => r.id));
  if (existing.has(id)) id = `${id.slice(0, 52)}-imp-${randomBytes(3).toString('hex')}`;
  const stage = join(store.runsDir, `.import-${randomBytes(6).toString('hex')}`);
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
