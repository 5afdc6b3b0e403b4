/**
 * imports.* and follow.* — external training logs into the run store (src/main/imports): an uploaded file
 * (browser upload, drag-and-drop), a file or folder on the main side (the desktop app's native dialog, named by
 * its grant; in browser mode a typed path inside the `serve --allow-dir` folders; namedFile.ts), and live
 * follow of a growing log, whose records and alerts reach subscribers through run.metrics / run.alert like a
 * training session's.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { err, ok, type Result } from '../../../shared/result';
import type { ImportResult } from '../../../shared/api';
import type { LabServices } from '../../app/lab';
import { BundleError } from '../../bundles/manifest';
import { ImportError, importLogs, type ImportLogsOptions } from '../../imports/importLogs';
import { importSources } from '../../imports/importSources';
import { isSqlite } from '../../imports/sqliteReadOnly';
import { isWandbLog } from '../../../core/formats/wandbLog';
import { isWandbConfigYaml, isWandbHistoryHead } from '../../../core/formats/wandbFiles';
import { isMlflowRunMeta } from '../../imports/trackers';
import type { AreaMethods, CallContext, Handlers } from '../types';
import { createPickHandlers, namedPath } from './namedFile';
import { mainSidePath, pathRefusal } from './pathAccess';

/** The last part of an uploaded file's name, with only portable characters (never a path). */
function uploadFileName(fileName: string): string {
  const base =
    fileName
      .split(/[\\/]/)
      .filter((p) => p.length > 0)
      .pop() ?? 'upload';
  return (
    base
      .replace(/[^A-Za-z0-9._=+-]+/g, '_')
      .replace(/^\.+/, '')
      .slice(0, 120) || 'upload'
  );
}

/** Largest upload through imports.file (decoded bytes; the renderer's FILE_LIMIT_BYTES says the same). */
export const MAX_UPLOAD_BYTES = 150 * 1000 * 1000;

/**
 * A file that belongs to a tracker's store, from its first bytes: a W&B transaction log, a SQLite database (MLflow,
 * Trackio), an MLflow file-store run's meta.yaml, an older W&B client's config.yaml or history.
 */
function isTrackerFile(head: Uint8Array): boolean {
  if (isWandbLog(head) || isSqlite(head)) return true;
  const text = new TextDecoder().decode(head);
  return isMlflowRunMeta(text) || isWandbConfigYaml(text) || isWandbHistoryHead(text);
}

/** The folder part of a path inside a picked folder ('' at its top), either separator. */
function folderOf(p: string): string {
  const i = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return i < 0 ? '' : p.slice(0, i);
}

/** What a page refused a path in browser mode can do instead. */
const UPLOAD_INSTEAD =
  'upload the file instead, or restart with "arlarena serve --allow-dir FOLDER" naming the folder that holds your logs';

/** A file named by path (not in the desktop app): absolute (`~` expanded), in browser mode inside an allowed folder. */
async function byPath(path: string, ctx: CallContext): Promise<Result<string>> {
  const p = mainSidePath(path);
  if (p === null)
    return err('VALIDATION', `path "${path}" is not absolute; give the full path on the machine the lab runs on`, { field: 'path' });
  const refused = await pathRefusal(p, ctx, 'files', UPLOAD_INSTEAD);
  return refused ?? ok(p);
}

function importFailure(e: unknown, field: string): Result<never> {
  if (e instanceof ImportError) {
    if (e.code === 'NOT_FOUND') return err('NOT_FOUND', e.message, { field });
    if (e.code === 'BAD_OPTION') return err('VALIDATION', e.message, { field: 'format' });
    if (e.code === 'UNKNOWN_FORMAT') return err('VALIDATION', e.message, { field, hint: 'if you know the format, pass it as format' });
    return err('VALIDATION', e.message, { field });
  }
  if (e instanceof BundleError)
    return err('BUNDLE_INVALID', e.message, { hint: 'export the run again from its source, or check the file was copied completely' });
  throw e;
}

export function createImportsHandlers(services: LabServices): Handlers<AreaMethods<'imports'>> {
  const announce = (r: ImportResult) => {
    for (const id of r.runIds) services.bus.emit('runs.changed', { runId: id });
  };
  const options = (i: { format?: string; name?: string; tags?: string[]; again?: boolean }): ImportLogsOptions => ({
    format: i.format,
    name: i.name,
    tags: i.tags ? [...new Set(i.tags)] : undefined,
    again: i.again,
  });
  /** Files uploaded together as a tracker's folder: written out in their folder layout, then read by content. */
  const importTrackerFiles = async (
    files: readonly { fileName: string; dataBase64: string }[],
    rest: { format?: string; name?: string; tags?: string[]; again?: boolean },
  ): Promise<Result<ImportResult>> => {
    const names = files.map((f) => f.fileName);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined) return err('VALIDATION', `${dup} is sent twice`, { field: 'files' });
    const b64 = files.reduce((n, f) => n + f.dataBase64.length, 0);
    if (b64 > Math.ceil(MAX_UPLOAD_BYTES / 3) * 4 + 4)
      return err('VALIDATION', `the tracker files are over the ${MAX_UPLOAD_BYTES / 1e6} MB upload limit together`, {
        field: 'files',
        hint: 'import the folder by path (imports.path) or with `arlarena import DIR` where the lab runs',
      });
    const { store } = await services.lab();
    const dir = join(store.dataDir, '.uploads', randomBytes(6).toString('hex'));
    const uploaded: Record<string, string> = {};
    // Each part of the path made portable (never `..`): the layout is kept, nothing lands outside `dir`.
    const laidOut = files.map((f) => {
      const parts = f.fileName
        .split(/[\\/]/)
        .filter((p) => p !== '' && p !== '.' && p !== '..')
        .map((p) => p.replace(/[^A-Za-z0-9._=+@-]+/g, '_').slice(0, 120) || '_');
      return { ...f, tmp: join(dir, 'upload', ...(parts.length > 0 ? parts : ['upload'])) };
    });
    for (const f of laidOut) {
      if (uploaded[f.tmp] !== undefined) return err('VALIDATION', `${f.fileName} is sent twice`, { field: 'files' });
      uploaded[f.tmp] = f.fileName;
    }
    // A name that is also the folder of another could not be laid out (one path, both a file and a folder).
    for (const f of laidOut) {
      for (let d = dirname(f.tmp); d.length > dir.length; d = dirname(d)) {
        const asFile = uploaded[d];
        if (asFile !== undefined)
          return err('VALIDATION', `${asFile} is sent both as a file and as a folder holding ${f.fileName}`, { field: 'files' });
      }
    }
    try {
      for (const f of laidOut) {
        await mkdir(dirname(f.tmp), { recursive: true });
        await writeFile(f.tmp, Buffer.from(f.dataBase64, 'base64'));
      }
      const r = await importSources(store, [join(dir, 'upload')], { ...options(rest), uploadedFiles: uploaded });
      announce(r);
      return ok(r);
    } catch (e) {
      if (e instanceof Error) e.message = e.message.split(join(dir, 'upload')).join('the uploaded folder');
      return importFailure(e, 'files');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  return {
    ...createPickHandlers(),
    'imports.file': async ({ fileName, dataBase64, ...rest }) => {
      // base64 is 4 chars per 3 bytes: refuse before decoding what is surely over the cap.
      if (dataBase64.length > Math.ceil(MAX_UPLOAD_BYTES / 3) * 4 + 4) {
        return err('VALIDATION', `${fileName}: over the ${MAX_UPLOAD_BYTES / 1e6} MB upload limit`, {
          field: 'dataBase64',
          hint: 'import it by path (imports.path) or with `arlarena import PATH` where the lab runs',
        });
      }
      const data = Buffer.from(dataBase64, 'base64');
      if (data.length === 0) return err('VALIDATION', `${fileName}: the file is empty or not base64`, { field: 'dataBase64' });
      const { store } = await services.lab();
      const dir = join(store.dataDir, '.uploads', randomBytes(6).toString('hex'));
      // A tracker's file (a .wandb log, an MLflow or Trackio SQLite database) goes through importSources, which
      // reads it as the tracker's runs; its copy keeps the file's own name (Trackio names a project by its file).
      const tracker = isSqlite(data) || isWandbLog(data);
      const tmp = join(dir, tracker ? uploadFileName(fileName) : 'upload');
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(tmp, data);
        const r = tracker
          ? await importSources(store, [tmp], { ...options(rest), uploadedAs: fileName })
          : await importLogs(store, [tmp], { ...options(rest), uploadedAs: fileName });
        announce(r);
        return ok(r);
      } catch (e) {
        // The importer names the temp copy it read; the user knows the file by the name it was uploaded under.
        if (e instanceof Error) e.message = e.message.split(tmp).join(fileName);
        return importFailure(e, 'dataBase64');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    'imports.files': async ({ files, ...rest }) => {
      // Trackers' files from a picked or dropped folder (W&B run folders, MLflow runs, databases) travel together:
      // they are laid out as they were in the folder and read as the tracker's runs (a resumed W&B run's logs sit
      // in two run folders). Recognised by content, as a path import recognises them.
      if (files.some((f) => isTrackerFile(Buffer.from(f.dataBase64.slice(0, 5464), 'base64')))) return importTrackerFiles(files, rest);
      // One run folder: TensorBoard groups a run by the directory holding its event files.
      const folders = [...new Set(files.map((f) => folderOf(f.fileName)))];
      if (folders.length > 1) {
        return err(
          'VALIDATION',
          `the files come from ${folders.length} folders (${folders
            .slice(0, 3)
            .map((d) => JSON.stringify(d || '.'))
            .join(', ')}${folders.length > 3 ? ', …' : ''}); send one run folder's event files per call`,
          { field: 'files', hint: 'group the files by the folder that holds them, one call each' },
        );
      }
      const names = files.map((f) => f.fileName);
      const dup = names.find((n, i) => names.indexOf(n) !== i);
      if (dup !== undefined) return err('VALIDATION', `${dup} is sent twice`, { field: 'files' });
      const b64 = files.reduce((n, f) => n + f.dataBase64.length, 0);
      if (b64 > Math.ceil(MAX_UPLOAD_BYTES / 3) * 4 + 4) {
        return err(
          'VALIDATION',
          `${folders[0] || 'the folder'}: its event files are over the ${MAX_UPLOAD_BYTES / 1e6} MB upload limit together`,
          { field: 'files', hint: 'import the folder by path (imports.path) or with `arlarena import DIR` where the lab runs' },
        );
      }
      // TensorBoard reads a folder's event files in name order (their names start with the writer's start time).
      const order = files
        .map((f, i) => ({ f, i }))
        .sort((a, b) => (a.f.fileName < b.f.fileName ? -1 : a.f.fileName > b.f.fileName ? 1 : 0));
      const datas = order.map(({ f }) => Buffer.from(f.dataBase64, 'base64'));
      const empty = order.findIndex((_, k) => datas[k].length === 0);
      if (empty >= 0) return err('VALIDATION', `${order[empty].f.fileName}: the file is empty or not base64`, { field: 'files' });
      const { store } = await services.lab();
      const dir = join(store.dataDir, '.uploads', randomBytes(6).toString('hex'));
      const tmps = order.map((_, k) => join(dir, `upload-${k}`));
      try {
        await mkdir(dir, { recursive: true });
        for (const [k, d] of datas.entries()) await writeFile(tmps[k], d);
        const r = await importLogs(store, tmps, { ...options(rest), uploadedFolder: order.map(({ f }) => f.fileName) });
        announce(r);
        return ok(r);
      } catch (e) {
        // As for one file: messages name the user's files, not the temporary copies.
        // Longest first: upload-1 is a prefix of upload-10.
        if (e instanceof Error) for (let k = tmps.length - 1; k >= 0; k--) e.message = e.message.split(tmps[k]).join(order[k].f.fileName);
        return importFailure(e, 'files');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    'imports.path': async ({ path, grant, ...rest }, ctx) => {
      const named = await namedPath({ path, grant }, ctx, (given) => byPath(given, ctx));
      if (!named.ok) return named;
      const p = named.value;
      const { store } = await services.lab();
      try {
        // A path on the lab's machine may be a tracker's store (a W&B folder, mlruns/, mlflow.db, a Trackio
        // database): importSources finds those by content and hands everything else to the log importer.
        const r = await importSources(store, [p], options(rest));
        announce(r);
        return ok(r);
      } catch (e) {
        return importFailure(e, 'path');
      }
    },
  };
}

export function createFollowHandlers(services: LabServices): Handlers<AreaMethods<'follow'>> {
  return {
    'follow.start': async ({ path, grant, format, name }, ctx) => {
      const named = await namedPath({ path, grant }, ctx, (given) => byPath(given, ctx));
      if (!named.ok) return named;
      const p = named.value;
      const fm = await services.follows();
      try {
        const info = await fm.start(p, { format, name });
        return ok({ runId: info.runId, ...(info.runIds ? { runIds: info.runIds } : {}) });
      } catch (e) {
        return importFailure(e, 'path');
      }
    },
    'follow.stop': async ({ runId }) => {
      const info = await (await services.follows()).stop(runId);
      return info
        ? ok(info)
        : err('NOT_FOUND', `run ${runId} is not being followed`, { field: 'runId', hint: 'follow.list names the followed runs' });
    },
    'follow.list': async () => ok((await services.follows()).list()),
  };
}
