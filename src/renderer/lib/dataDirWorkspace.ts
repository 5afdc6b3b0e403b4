/**
 * The workspace kept in the data directory (workspace.get / workspace.set, src/shared/workspace.ts) behind the
 * storage interface the views already save through, so the desktop app and every browser on `arlarena serve` open
 * the runs table and Compare as any of them left it; the browser's storage stays the fallback and the copy read
 * before the lab answers.
 *
 * The storage keys it carries (projectWorkspace.ts, metricPicker.ts, compareWorkspace.ts) and their parts:
 *   arlarena.project.<project>.runs     → runs          arlarena.charts.<view>@<project> → charts.<view>
 *   arlarena.project.<project>.compare  → compare       arlarena.compare.ws:<ids>        → sets[<ids>]
 * Keys of another project (a tab's earlier data directory) stay in this browser only.
 *
 * Once the lab answers (Lab.init: connectWorkspace), the data directory's parts are written into the browser's
 * storage, parts only this browser had are sent up (a workspace saved before the data directory kept one), and every
 * later change is sent too, gathered for a moment (views save on every change). Pure apart from the timer.
 */
import type { Workspace, WorkspacePatch } from '../../shared/workspace';
import { currentProject, projectStorageKey } from './projectWorkspace';
import { workspaceStorageKey } from './compareWorkspace';

type KeyStore = Pick<Storage, 'getItem' | 'setItem'>;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export type WorkspacePart =
  | { readonly kind: 'runs' }
  | { readonly kind: 'compare' }
  | { readonly kind: 'charts'; readonly view: 'run' | 'compare' }
  | { readonly kind: 'set'; readonly key: string };

const SET_PREFIX = workspaceStorageKey([]);
const SET_KEY = /^[A-Za-z0-9_-]{1,64}(,[A-Za-z0-9_-]{1,64})*$/;

/** The part of the data directory's workspace a storage key holds for `project`; null for any other key. */
export function partOfKey(key: string, project: string): WorkspacePart | null {
  if (key === projectStorageKey(project, 'runs')) return { kind: 'runs' };
  if (key === projectStorageKey(project, 'compare')) return { kind: 'compare' };
  if (key === `arlarena.charts.run@${project}`) return { kind: 'charts', view: 'run' };
  if (key === `arlarena.charts.compare@${project}`) return { kind: 'charts', view: 'compare' };
  if (key.startsWith(SET_PREFIX) && SET_KEY.test(key.slice(SET_PREFIX.length))) return { kind: 'set', key: key.slice(SET_PREFIX.length) };
  return null;
}

/** The storage key of a part for `project`. */
export function storageKeyOf(part: WorkspacePart, project: string): string {
  switch (part.kind) {
    case 'runs':
    case 'compare':
      return projectStorageKey(project, part.kind);
    case 'charts':
      return `arlarena.charts.${part.view}@${project}`;
    case 'set':
      return `${SET_PREFIX}${part.key}`;
  }
}

/** A change setting one part to a stored value (JSON text); null for text that is not JSON of the part's shape. */
export function patchFor(part: WorkspacePart, text: string): WorkspacePatch | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const isObject = v !== null && typeof v === 'object' && !Array.isArray(v);
  switch (part.kind) {
    case 'runs':
      return isObject ? { runs: v as WorkspacePatch['runs'] } : null;
    case 'compare':
      return isObject ? { compare: v as WorkspacePatch['compare'] } : null;
    case 'charts':
      return Array.isArray(v) ? { charts: { [part.view]: v as string[] } } : null;
    case 'set':
      return isObject ? { sets: { [part.key]: v as { q: string; group: string } } } : null;
  }
}

/** Two changes as one (the later wins per part; compared sets merge). */
export function mergePatches(a: WorkspacePatch, b: WorkspacePatch): WorkspacePatch {
  const out: Mutable<WorkspacePatch> = { ...a, ...b };
  if (a.charts || b.charts) out.charts = { ...(a.charts ?? {}), ...(b.charts ?? {}) };
  if (a.sets || b.sets) out.sets = { ...(a.sets ?? {}), ...(b.sets ?? {}) };
  return out;
}

/** Each part of a change on its own (sent one by one when the whole was refused, so one bad part blocks no other). */
export function splitPatch(p: WorkspacePatch): WorkspacePatch[] {
  const out: WorkspacePatch[] = [];
  if (p.runs !== undefined) out.push({ runs: p.runs });
  if (p.compare !== undefined) out.push({ compare: p.compare });
  for (const view of ['run', 'compare'] as const) if (p.charts?.[view] !== undefined) out.push({ charts: { [view]: p.charts[view] } });
  for (const [k, v] of Object.entries(p.sets ?? {})) out.push({ sets: { [k]: v } });
  return out;
}

/** The parts of a workspace with their storage keys and values (JSON text, as the views store them). */
export function workspaceEntries(ws: Workspace, project: string): [string, string][] {
  const out: [string, string][] = [];
  if (ws.runs) out.push([storageKeyOf({ kind: 'runs' }, project), JSON.stringify(ws.runs)]);
  if (ws.compare) out.push([storageKeyOf({ kind: 'compare' }, project), JSON.stringify(ws.compare)]);
  for (const view of ['run', 'compare'] as const) {
    const keys = ws.charts?.[view];
    if (keys) out.push([storageKeyOf({ kind: 'charts', view }, project), JSON.stringify(keys)]);
  }
  for (const [k, v] of Object.entries(ws.sets ?? {})) out.push([storageKeyOf({ kind: 'set', key: k }, project), JSON.stringify(v)]);
  return out;
}

/** The storage keys a change sets (what it was made from). */
export function patchKeys(p: WorkspacePatch, project: string): string[] {
  const out: string[] = [];
  if (p.runs !== undefined) out.push(storageKeyOf({ kind: 'runs' }, project));
  if (p.compare !== undefined) out.push(storageKeyOf({ kind: 'compare' }, project));
  for (const view of ['run', 'compare'] as const)
    if (p.charts?.[view] !== undefined) out.push(storageKeyOf({ kind: 'charts', view }, project));
  for (const k of Object.keys(p.sets ?? {})) out.push(storageKeyOf({ kind: 'set', key: k }, project));
  return out;
}

/** Where a browser lists the parts it changed and has not yet seen the data directory take (a tab closed too soon). */
export function unsentKey(project: string): string {
  return `arlarena.workspace.unsent@${project}`;
}

/** What a send answers: whether the data directory took the change, and if not, why (VALIDATION: never will). */
export type SendWorkspace = (patch: WorkspacePatch) => Promise<{ ok: boolean; error?: { code: string } }>;

/**
 * The views' storage: reads and writes the browser's storage (or memory where it is blocked), and once connected
 * sends each changed part of the workspace to the data directory, a moment after the last change.
 */
export class SyncedStorage implements KeyStore {
  private readonly memory = new Map<string, string>();
  private send: SendWorkspace | null = null;
  private project: string | null = null;
  private pending: WorkspacePatch | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly local: KeyStore | null,
    private readonly delayMs = 400,
  ) {}

  getItem(key: string): string | null {
    try {
      const v = this.local?.getItem(key);
      if (v !== null && v !== undefined) return v;
    } catch {
      // Blocked storage: memory below.
    }
    return this.memory.get(key) ?? null;
  }

  setItem(key: string, value: string): void {
    if (this.getItem(key) === value) return;
    this.store(key, value);
    const project = this.project ?? currentProject();
    const part = project === null ? null : partOfKey(key, project);
    const patch = part ? patchFor(part, value) : null;
    if (patch) this.queue(patch);
  }

  /**
   * The lab answered: the data directory's workspace goes into this browser's storage, the parts only this browser
   * has go up, and later changes follow. `ws` null (the lab has no workspace.get, or it failed): storage only.
   */
  connect(project: string, ws: Workspace | null, send: SendWorkspace): void {
    this.project = project;
    if (ws === null) return;
    this.send = send;
    // Saves made before the lab answered came from this browser's copy (a view saves what it opened with): the data
    // directory's workspace wins over them — except changes this browser made and could not send (a tab closed
    // within the moment changes wait): those are newer, and go up now.
    this.pending = null;
    const unsent = new Set(this.unsent().filter((k) => partOfKey(k, project) !== null && this.getItem(k) !== null));
    this.store(unsentKey(project), JSON.stringify([...unsent]));
    const fromLab = new Set<string>();
    for (const [k, v] of workspaceEntries(ws, project)) {
      fromLab.add(k);
      if (!unsent.has(k)) this.store(k, v);
    }
    for (const k of unsent) {
      const patch = patchFor(partOfKey(k, project)!, this.getItem(k)!);
      if (patch) this.queue(patch);
    }
    // A workspace this browser saved before the data directory kept one: the parts the lab lacks go up.
    for (const part of [
      { kind: 'runs' },
      { kind: 'compare' },
      { kind: 'charts', view: 'run' },
      { kind: 'charts', view: 'compare' },
    ] as const) {
      const k = storageKeyOf(part, project);
      const v = fromLab.has(k) ? null : this.getItem(k);
      const patch = v === null ? null : patchFor(part, v);
      if (patch) this.queue(patch);
    }
  }

  /** Sends what is waiting now (tests; a page about to close). */
  async flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const patch = this.pending;
    this.pending = null;
    if (patch === null || this.send === null || this.project === null) return;
    const project = this.project;
    const res = await this.send(patch);
    // Taken, or refused as out of the lab's bounds (sent again it would be refused again): no longer waiting.
    const settled = (r: Awaited<ReturnType<SendWorkspace>>) => r.ok || r.error?.code === 'VALIDATION';
    if (res.ok) return this.markUnsent([], patchKeys(patch, project));
    const parts = splitPatch(patch);
    if (parts.length < 2) return settled(res) ? this.markUnsent([], patchKeys(patch, project)) : undefined;
    // Refused as a whole: each part on its own, so one part out of bounds blocks no other.
    for (const p of parts) if (settled(await this.send(p))) this.markUnsent([], patchKeys(p, project));
  }

  /** The parts this browser changed and has not yet seen the data directory take. */
  private unsent(): string[] {
    if (this.project === null) return [];
    try {
      const v: unknown = JSON.parse(this.getItem(unsentKey(this.project)) ?? '[]');
      return Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string').slice(0, 500) : [];
    } catch {
      return [];
    }
  }

  private markUnsent(add: readonly string[], sent: readonly string[]): void {
    if (this.project === null) return;
    const done = new Set(sent);
    const keys = [...new Set([...this.unsent(), ...add])].filter((k) => !done.has(k));
    this.store(unsentKey(this.project), JSON.stringify(keys));
  }

  private store(key: string, value: string): void {
    this.memory.set(key, value);
    try {
      this.local?.setItem(key, value);
    } catch {
      // Full or blocked storage: memory and the data directory still hold it.
    }
  }

  private queue(patch: WorkspacePatch): void {
    this.pending = this.pending ? mergePatches(this.pending, patch) : patch;
    if (this.send === null || this.project === null) return;
    this.markUnsent(patchKeys(patch, this.project), []);
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), this.delayMs);
  }
}

let shared: SyncedStorage | null = null;

/** The storage the views save their workspace through (one per page). */
export function workspaceStorage(): SyncedStorage {
  if (shared === null) {
    let local: KeyStore | null = null;
    try {
      local = typeof localStorage === 'undefined' ? null : localStorage;
    } catch {
      // A page whose storage is blocked (opaque origin, privacy settings).
    }
    shared = new SyncedStorage(local);
  }
  return shared;
}
