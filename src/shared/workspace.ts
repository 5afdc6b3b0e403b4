/**
 * The workspace saved in the data directory (`workspace.get` / `workspace.set`, file `workspace.json`), so the
 * desktop app and every browser on `arlarena serve` share one project's workspace, as a W&B project keeps its
 * workspace on the server: the runs table's search, filters, sort and columns; Compare's project defaults
 * (smoothing, x-axis, grouping); the chart choice of the run page and of Compare; and each compared set of runs'
 * own view (charts, smoothing, x-axis, hidden runs, parallel axes: Compare's address query, and its grouping).
 *
 * The renderer keeps a copy in the browser's storage as the fallback (src/renderer/lib/dataDirWorkspace.ts) and
 * cleans what it reads again (projectWorkspace.ts, compareWorkspace.ts); these schemas bound what the main side
 * accepts and stores. Zod-only, no Node: imported by the contract (api.ts).
 */
import { z } from 'zod';

/** A key as the renderer stores it: a metric key, `summary:<key>` or `config:<path>`. */
const Key = z.string().min(1).max(210);

export const RunsWorkspaceSchema = z
  .object({
    search: z.string().max(500).optional(),
    status: z.enum(['', 'active', 'queued', 'running', 'paused', 'completed', 'failed', 'stopped', 'interrupted']).optional(),
    env: z.string().max(200).optional(),
    preset: z.string().max(200).optional(),
    tag: z.string().max(200).optional(),
    sort: Key.optional(),
    dir: z.enum(['asc', 'desc']).optional(),
    columns: z.array(Key).max(50).optional(),
  })
  .strict();

export const CompareDefaultsSchema = z
  .object({
    smoothing: z.enum(['none', 'ema', 'mean']).optional(),
    strength: z.number().min(0).lt(1).optional(),
    xAxis: z.enum(['step', 'wall', 'tokens']).optional(),
    xKey: z.string().min(1).max(200).optional(),
    group: z.string().max(100).optional(),
  })
  .strict();

/** Charts chosen in a view's metric picker (metricPicker.ts keeps at most 500). */
export const ChartChoiceSchema = z.array(Key).max(500);

/** A compared set's key: its run ids, sorted, joined by commas (compareWorkspace.ts workspaceStorageKey). */
export const CompareSetKey = z
  .string()
  .max(4000)
  .regex(/^[A-Za-z0-9_-]{1,64}(,[A-Za-z0-9_-]{1,64})*$/, 'a compared set is run ids joined by commas');

/** A compared set's view: Compare's workspace query (`&metrics=…&smooth=…&hide=…`) and its grouping. */
export const CompareSetSchema = z.object({ q: z.string().max(20_000), group: z.string().max(100) }).strict();

/** How many compared sets the file keeps; the least recently saved go first. */
export const MAX_COMPARE_SETS = 200;

export const WorkspaceSchema = z
  .object({
    runs: RunsWorkspaceSchema.optional(),
    compare: CompareDefaultsSchema.optional(),
    charts: z.object({ run: ChartChoiceSchema.optional(), compare: ChartChoiceSchema.optional() }).strict().optional(),
    sets: z.record(CompareSetKey, CompareSetSchema).optional(),
  })
  .strict();
export type Workspace = z.infer<typeof WorkspaceSchema>;

/** A change: each part given replaces the stored one (null removes it); compared sets are merged by key. */
export const WorkspacePatchSchema = z
  .object({
    runs: RunsWorkspaceSchema.nullable().optional(),
    compare: CompareDefaultsSchema.nullable().optional(),
    charts: z
      .object({ run: ChartChoiceSchema.nullable().optional(), compare: ChartChoiceSchema.nullable().optional() })
      .strict()
      .optional(),
    sets: z
      .record(CompareSetKey, CompareSetSchema.nullable())
      .refine((s) => Object.keys(s).length <= MAX_COMPARE_SETS, `at most ${MAX_COMPARE_SETS} compared sets in one change`)
      .optional(),
  })
  .strict();
export type WorkspacePatch = z.infer<typeof WorkspacePatchSchema>;

/** What workspace.get and workspace.set answer: the stored workspace, and why a part of the file was left out. */
export const WorkspaceReply = z.object({ workspace: WorkspaceSchema, problem: z.string().nullable() });
export type WorkspaceReply = z.infer<typeof WorkspaceReply>;
