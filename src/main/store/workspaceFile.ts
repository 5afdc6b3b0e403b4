/**
 * The project's workspace in the data directory (`workspace.json`, src/shared/workspace.ts), read and changed by
 * workspace.get / workspace.set. Written with writeFileAtomic (a reader, or another process serving the same
 * data directory, sees the old file or the new one), changes applied one at a time in this process. A file that
 * cannot be read keeps its readable parts; the answer names the file and what was left out, and the next change
 * writes a clean file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import {
  CompareDefaultsSchema,
  ChartChoiceSchema,
  CompareSetKey,
  CompareSetSchema,
  MAX_COMPARE_SETS,
  RunsWorkspaceSchema,
  type Workspace,
  type WorkspacePatch,
  type WorkspaceReply,
} from '../../shared/workspace';
import { writeFileAtomic } from './atomic';

export const WORKSPACE_FILE = 'workspace.json';
const VERSION = 1;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function issue(e: z.ZodError): string {
  const i = e.issues[0];
  return `${i.path.join('.') || '(top)'}: ${i.message}`;
}

/** The file's parts that validate, each on its own, and a sentence for those that did not. */
export function readWorkspaceText(text: string, shownAs: string): WorkspaceReply {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { workspace: {}, problem: `${shownAs} is not JSON (${(e as Error).message}); it is written again on the next change` };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return { workspace: {}, problem: `${shownAs} holds no workspace object; it is written again on the next change` };
  const r = raw as Record<string, unknown>;
  const out: Mutable<Workspace> = {};
  const left: string[] = [];
  const part = <T>(name: string, schema: z.ZodType<T>, v: unknown): T | undefined => {
    if (v === undefined) return undefined;
    const p = schema.safeParse(v);
    if (p.success) return p.data;
    left.push(`${name} (${issue(p.error)})`);
    return undefined;
  };
  const runs = part('runs', RunsWorkspaceSchema, r.runs);
  if (runs) out.runs = runs;
  const compare = part('compare', CompareDefaultsSchema, r.compare);
  if (compare) out.compare = compare;
  if (r.charts !== undefined && r.charts !== null && typeof r.charts === 'object') {
    const c = r.charts as Record<string, unknown>;
    const charts: { run?: string[]; compare?: string[] } = {};
    const run = part('charts.run', ChartChoiceSchema, c.run);
    if (run) charts.run = run;
    const cmp = part('charts.compare', ChartChoiceSchema, c.compare);
    if (cmp) charts.compare = cmp;
    if (charts.run || charts.compare) out.charts = charts;
  } else if (r.charts !== undefined) left.push('charts (not an object)');
  if (r.sets !== undefined && r.sets !== null && typeof r.sets === 'object' && !Array.isArray(r.sets)) {
    const sets: Record<string, z.infer<typeof CompareSetSchema>> = {};
    let bad = 0;
    for (const [k, v] of Object.entries(r.sets as Record<string, unknown>)) {
      const p = CompareSetSchema.safeParse(v);
      if (CompareSetKey.safeParse(k).success && p.success) sets[k] = p.data;
      else bad++;
    }
    if (bad > 0) left.push(`${bad} compared set${bad === 1 ? '' : 's'}`);
    if (Object.keys(sets).length > 0) out.sets = sets;
  } else if (r.sets !== undefined) left.push('sets (not an object)');
  return {
    workspace: out,
    problem: left.length ? `${shownAs}: left out ${left.join(', ')}; written again on the next change` : null,
  };
}

/** The workspace with a change applied: parts replaced or removed, compared sets merged (the newest last, at most MAX_COMPARE_SETS). */
export function applyWorkspacePatch(ws: Workspace, patch: WorkspacePatch): Workspace {
  const out: Mutable<Workspace> = { ...ws };
  if (patch.runs === null) delete out.runs;
  else if (patch.runs !== undefined) out.runs = patch.runs;
  if (patch.compare === null) delete out.compare;
  else if (patch.compare !== undefined) out.compare = patch.compare;
  if (patch.charts !== undefined) {
    const charts: { run?: string[]; compare?: string[] } = { ...(ws.charts ?? {}) };
    for (const view of ['run', 'compare'] as const) {
      const v = patch.charts[view];
      if (v === null) delete charts[view];
      else if (v !== undefined) charts[view] = v;
    }
    if (charts.run || charts.compare) out.charts = charts;
    else delete out.charts;
  }
  if (patch.sets !== undefined) {
    // A Map keeps insertion order whatever the keys look like: re-inserting a saved set moves it to the end.
    const sets = new Map(Object.entries(ws.sets ?? {}));
    for (const [k, v] of Object.entries(patch.sets)) {
      sets.delete(k);
      if (v !== null) sets.set(k, v);
    }
    const kept = [...sets].slice(Math.max(0, sets.size - MAX_COMPARE_SETS));
    if (kept.length > 0) out.sets = Object.fromEntries(kept);
    else delete out.sets;
  }
  return out;
}

export class WorkspaceFile {
  private readonly file: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string) {
    this.file = join(dataDir, WORKSPACE_FILE);
  }

  async read(): Promise<WorkspaceReply> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { workspace: {}, problem: null };
      throw e;
    }
    return readWorkspaceText(text, this.file);
  }

  /** Applies a change after any still being written, and answers the workspace as stored. */
  update(patch: WorkspacePatch): Promise<WorkspaceReply> {
    const next = this.queue.then(async () => {
      const { workspace } = await this.read();
      const updated = applyWorkspacePatch(workspace, patch);
      await writeFileAtomic(this.file, `${JSON.stringify({ version: VERSION, ...updated }, null, 1)}\n`);
      return { workspace: updated, problem: null };
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}
