/**
 * `arlarena export` / bundles.export: one zip with everything needed to audit and rerun a run.
 *
 *   manifest.json        format, schema version, app version + commit, SHA-256 + size of every other file
 *   run.json             the run record (config, seed, status, summary, backend, alerts), scrubbed
 *   config.json          { preset, seed, config }: the resolved config the run was started with
 *   environment.json     platform, CPU, memory, Node/Electron versions, compute backend, env + settings, task seeds
 *   package-lock.json    the dependency lockfile of the app that produced the run
 *   metrics.jsonl        the full metric stream (non-finite values encoded as strings)
 *   trajectories.jsonl   sampled trajectories, scrubbed
 *   alerts.json          collapse alerts
 *   checkpoint/…         the final checkpoint (default: on when under 64 MB)
 *   source/…             imported runs: the source log file(s) as imported (src/main/imports keeps a copy
 *                        up to 64 MB), so the bundle can be re-imported or the log re-read elsewhere
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, fsyncSync, openSync, writeSync } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { arch, cpus, platform, release, totalmem } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Zip, ZipDeflate, zipSync } from 'fflate';
import type { RunRecord } from '../../shared/api';
import { appCommit, appVersion, projectRoot } from '../platform/appInfo';
import { removeDeadTemps, writeFileAtomic } from '../store/atomic';
import { readJsonl } from '../store/jsonl';
import { CHECKPOINTS_DIR, METRICS_FILE, TRAJECTORIES_FILE, checkpointDirName } from '../store/runFiles';
import type { RunStore } from '../store/runStore';
import { BUNDLE_EXTENSION, BUNDLE_FORMAT, BUNDLE_SCHEMA_VERSION, type BundleManifest, sha256Hex } from './manifest';
import { scrub } from './scrub';
import { writerTag } from '../platform/process';

const DEFAULT_CHECKPOINT_LIMIT_BYTES = 64 * 1024 * 1024;
/** A metric stream past this is streamed into the zip instead of being read whole. */
export const STREAM_METRICS_BYTES = 32 * 1024 * 1024;
const ZIP_MTIME = new Date('2000-01-01T00:00:00Z');

export interface ExportOptions {
  /** Output file; default `<dataDir>/bundles/<runId>.arlarena.zip`. */
  readonly out?: string;
  /** Include the final checkpoint: true/false, or undefined = when smaller than 64 MB. */
  readonly includeCheckpoint?: boolean;
}

export interface ExportResult {
  readonly path: string;
  readonly fileName: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly files: number;
  readonly checkpointStep: number | null;
}

const enc = new TextEncoder();

async function dirSize(dir: string): Promise<number> {
  let total = 0;
  for (const n of await readdir(dir)) total += (await stat(join(dir, n))).size;
  return total;
}

export async function exportRun(store: RunStore, runId: string, opts: ExportOptions = {}): Promise<ExportResult> {
  const rec = await store.getRun(runId);
  if (!rec) throw new Error(`no run with id "${runId}"`);
  const dir = store.runDir(runId);
  const files: Record<string, Uint8Array> = {};
  const put = (p: string, data: Uint8Array | string) => {
    files[p] = typeof data === 'string' ? enc.encode(data) : data;
  };

  const record: RunRecord = scrub(rec);
  put('run.json', JSON.stringify(record, null, 1));
  put('config.json', JSON.stringify(scrub({ preset: rec.preset, seed: rec.seed, config: rec.config }), null, 1));
  put('alerts.json', JSON.stringify(scrub(rec.alerts), null, 1));

  // The metric stream's complete lines (a torn last line is left out). A large one is streamed into the zip
  // (hashed in a first pass) rather than held: a 10M-row imported run's export took 1.1 GB.
  const metricsPath = join(dir, METRICS_FILE);
  const metricsEnd = await completeLinesEnd(metricsPath);
  const streamed = metricsEnd > STREAM_METRICS_BYTES ? { sha256: await sha256OfRange(metricsPath, metricsEnd), bytes: metricsEnd } : null;
  if (!streamed) {
    const metrics = await readFile(metricsPath).catch(() => Buffer.alloc(0));
    put('metrics.jsonl', new Uint8Array(metrics.subarray(0, metricsEnd)));
  }
  const trajs = await readJsonl(join(dir, TRAJECTORIES_FILE));
  put('trajectories.jsonl', trajs.items.map((t) => `${JSON.stringify(scrub(t))}\n`).join(''));
  const taskIds = [...new Set(trajs.items.map((t) => String((t as { taskId?: unknown }).taskId)))].slice(0, 10_000);

  const lock = await readFile(join(projectRoot(), 'package-lock.json')).catch(() => null);
  if (lock) put('package-lock.json', new Uint8Array(lock));

  const envCfg = (rec.config as { env?: unknown }).env ?? null;
  const cpu = cpus();
  put(
    'environment.json',
    JSON.stringify(
      scrub({
        platform: platform(),
        arch: arch(),
        osRelease: release(),
        cpu: { model: cpu[0]?.model ?? 'unknown', cores: cpu.length },
        memoryBytes: totalmem(),
        versions: { node: process.versions.node, v8: process.versions.v8, electron: process.versions.electron ?? null },
        app: { version: appVersion(), commit: appCommit() },
        run: { appVersion: rec.appVersion, appCommit: rec.appCommit },
        compute: rec.backend,
        env: { name: rec.env, config: envCfg, implementation: `arlarena-lab ${rec.appVersion} (${rec.appCommit})` },
        taskSeeds: {
          master: rec.seed,
          derivation:
            'training task seeds derive from the master seed (src/core/envs/splits.ts trainSeed); held-out seeds are fixed (10^9 + j)',
          trajectoryTaskIds: taskIds,
        },
      }),
      null,
      1,
    ),
  );

  let checkpointStep: number | null = null;
  const steps = await store.filesOf(runId).checkpointSteps();
  const last = steps[steps.length - 1];
  if (last !== undefined && opts.includeCheckpoint !== false) {
    const cdir = join(dir, CHECKPOINTS_DIR, checkpointDirName(last));
    const size = await dirSize(cdir);
    if (opts.includeCheckpoint === true || size <= DEFAULT_CHECKPOINT_LIMIT_BYTES) {
      for (const n of await readdir(cdir)) put(`checkpoint/${checkpointDirName(last)}/${n}`, new Uint8Array(await readFile(join(cdir, n))));
      checkpointStep = last;
    }
  }

  // Imported runs: the source logs kept with the run (runs/<id>/source/, written by src/main/imports).
  const sourceDir = join(dir, 'source');
  for (const n of (await readdir(sourceDir).catch(() => [] as string[])).sort())
    put(`source/${n}`, new Uint8Array(await readFile(join(sourceDir, n))));

  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    schemaVersion: BUNDLE_SCHEMA_VERSION,
    createdAt: new Date().toISOString(),
    app: { version: appVersion(), commit: appCommit() },
    run: {
      id: rec.id,
      name: record.name,
      env: rec.env,
      preset: rec.preset,
      seed: rec.seed,
      status: rec.status,
      step: rec.step,
      totalSteps: rec.totalSteps,
    },
    files: {
      ...Object.fromEntries(Object.entries(files).map(([p, d]) => [p, { sha256: sha256Hex(d), bytes: d.length }])),
      ...(streamed ? { 'metrics.jsonl': streamed } : {}),
    },
    checkpointStep,
  };
  const out = resolve(opts.out ?? join(store.dataDir, 'bundles', `${runId}${BUNDLE_EXTENSION}`));
  await mkdir(dirname(out), { recursive: true });
  // what exports of this file killed before their rename left beside it (a whole bundle each)
  await removeDeadTemps(out);
  const nFiles = Object.keys(files).length + 1 + (streamed ? 1 : 0);
  if (streamed) {
    const w = await writeStreamedZip(
      out,
      { 'manifest.json': enc.encode(JSON.stringify(manifest, null, 1)), ...files },
      'metrics.jsonl',
      metricsPath,
      metricsEnd,
    );
    return { path: out, fileName: basename(out), bytes: w.bytes, sha256: w.sha256, files: nFiles, checkpointStep };
  }
  const zipped = zipSync({ 'manifest.json': enc.encode(JSON.stringify(manifest, null, 1)), ...files }, { level: 6, mtime: ZIP_MTIME });
  await writeFileAtomic(out, zipped);
  return { path: out, fileName: basename(out), bytes: zipped.length, sha256: sha256Hex(zipped), files: nFiles, checkpointStep };
}

/** Where the metric stream's complete lines end (after its last newline); 0 when it has none or no file. */
async function completeLinesEnd(file: string): Promise<number> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch {
    return 0;
  }
  try {
    const size = (await fh.stat()).size;
    const buf = Buffer.alloc(64 * 1024);
    for (let end = size; end > 0;) {
      const start = Math.max(0, end - buf.length);
      const { bytesRead } = await fh.read(buf, 0, end - start, start);
      const i = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (i >= 0) return start + i + 1;
      end = start;
    }
    return 0;
  } finally {
    await fh.close();
  }
}

/**
 * The SHA-256 and size of a run's metric stream as an export puts it in a bundle (its complete lines): import
 * compares it with a bundle's metrics.jsonl to tell a bundle of a run that is already here (importBundle.ts).
 */
export async function exportedMetricsHash(file: string): Promise<{ sha256: string; bytes: number }> {
  const end = await completeLinesEnd(file);
  return { sha256: end > 0 ? await sha256OfRange(file, end) : sha256Hex(new Uint8Array()), bytes: end };
}

async function sha256OfRange(file: string, end: number): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(file, { start: 0, end: end - 1, highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>)
    h.update(c);
  return h.digest('hex');
}

/**
 * The bundle as a zip written while it is made (fflate's streaming Zip, entries in the same order and with the
 * same fixed time as zipSync's): the small files whole, then `bigName` read from `bigPath` a slice at a time.
 * Written to a temporary file, synced, then renamed over `out`.
 */
async function writeStreamedZip(
  out: string,
  small: Record<string, Uint8Array>,
  bigName: string,
  bigPath: string,
  bigEnd: number,
): Promise<{ bytes: number; sha256: string }> {
  const tmp = `${out}.${writerTag()}.tmp`; // its writer named, for removeDeadTemps
  const fd = openSync(tmp, 'w');
  const hash = createHash('sha256');
  let bytes = 0;
  let failure: Error | null = null;
  try {
    const zip = new Zip((e, chunk) => {
      if (e) {
        failure = e;
        return;
      }
      writeSync(fd, chunk);
      hash.update(chunk);
      bytes += chunk.length;
    });
    const entry = (name: string) => {
      const f = new ZipDeflate(name, { level: 6 });
      f.mtime = ZIP_MTIME;
      zip.add(f);
      return f;
    };
    for (const [name, data] of Object.entries(small)) entry(name).push(data, true);
    const big = entry(bigName);
    for await (const c of createReadStream(bigPath, { start: 0, end: bigEnd - 1, highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
      big.push(new Uint8Array(c.buffer, c.byteOffset, c.length), false);
      if (failure) throw failure;
    }
    big.push(new Uint8Array(0), true);
    zip.end();
    if (failure) throw failure;
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    await rm(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  await rename(tmp, out);
  return { bytes, sha256: hash.digest('hex') };
}
