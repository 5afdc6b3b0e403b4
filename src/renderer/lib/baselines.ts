/**
 * How the run views write a run's baselines (runs.baselines): success rates as percentages with their 95 %
 * Wilson interval — the same numbers `arlarena eval` prints beside a checkpoint's held-out success.
 */
import type { RunBaselines, RunRecord, SuccessInterval } from '../../shared/api';
import type { ApiError, Result } from '../../shared/result';

function pct(v: number): string {
  return (100 * v).toFixed(1);
}

/** "10.5 % [7.0–15.5]" (the bracket is the 95 % Wilson interval). */
export function fmtInterval(iv: SuccessInterval): string {
  return `${pct(iv.rate)} % [${pct(iv.lo)}–${pct(iv.hi)}]`;
}

/**
 * The parts of the baselines line, in reading order: random and expert on the run's own validation tasks, then
 * the shipped warm start on its own held-out set (with its n, which usually differs from the run's).
 */
export function baselineParts(b: RunBaselines): string[] {
  const parts = [`random ${fmtInterval(b.random)}`, `expert ${fmtInterval(b.expert)}`];
  const ws = b.warmStart;
  if (ws && (ws.greedy || ws.sampled)) {
    const scored = [ws.greedy ? `${pct(ws.greedy.rate)} % greedy` : null, ws.sampled ? `${pct(ws.sampled.rate)} % sampled` : null].filter(
      (x) => x !== null,
    );
    const n = (ws.greedy ?? ws.sampled)!.n;
    parts.push(`warm start ${scored.join(' / ')} (n = ${n})`);
  }
  return parts;
}

/** Tooltip for the warm-start part: the checkpoint, both intervals and the sampling temperature. */
export function warmStartTitle(b: RunBaselines): string {
  const ws = b.warmStart;
  if (!ws) return '';
  const lines = [`π_ref: ${ws.source}`];
  if (ws.greedy) lines.push(`greedy ${fmtInterval(ws.greedy)} on ${ws.greedy.n} held-out tasks`);
  if (ws.sampled)
    lines.push(
      `sampled${ws.sampledTemperature !== null ? ` (T ${ws.sampledTemperature})` : ''} ${fmtInterval(ws.sampled)} on ${ws.sampled.n} held-out tasks`,
    );
  return lines.join('\n');
}

/** One line for a failed runs.baselines call: what happened and what to do. */
export function baselineError(e: ApiError): string {
  return `${e.message}${e.hint ? ` — ${e.hint}` : ''}`;
}

/** Per run: the baselines, or why there are none and what to do. */
export type BaselineCell = { readonly value: RunBaselines } | { readonly error: string };

export const NO_BASELINES: ReadonlyMap<string, BaselineCell> = new Map();

/** runs.baselines replies (in `ids` order) by run id. */
export function baselineCells(ids: readonly string[], replies: readonly Result<RunBaselines>[]): ReadonlyMap<string, BaselineCell> {
  return new Map(
    ids.map((id, i) => {
      const r = replies[i];
      return [id, r.ok ? { value: r.value } : { error: baselineError(r.error) }];
    }),
  );
}

/** Runs whose baselines failed for the same reason, and that reason said once ("each …" / "it …"). */
export interface BaselineErrorGroup {
  readonly runs: readonly { readonly id: string; readonly name: string }[];
  readonly reason: string;
}

/**
 * One line per reason rather than per run: Compare of N synthetic runs showed the same "run X has no config.env"
 * N times. The server names the run first (`run <id> …`, runBaselines.ts); that prefix becomes "it" or "each".
 * A text in another shape keeps its own line.
 */
export function groupBaselineErrors(errors: readonly { id: string; name: string; error: string }[]): BaselineErrorGroup[] {
  const groups = new Map<string, { runs: { id: string; name: string }[]; rest: string | null; raw: string }>();
  for (const e of errors) {
    const prefix = `run ${e.id} `;
    const rest = e.error.startsWith(prefix) ? e.error.slice(prefix.length) : null;
    const key = rest ?? `${e.id}\u0000${e.error}`;
    const g = groups.get(key);
    if (g) g.runs.push({ id: e.id, name: e.name });
    else groups.set(key, { runs: [{ id: e.id, name: e.name }], rest, raw: e.error });
  }
  return [...groups.values()].map((g) => ({
    runs: g.runs,
    reason: g.rest === null ? g.raw : `${g.runs.length === 1 ? 'it' : 'each'} ${g.rest}`,
  }));
}

/**
 * Why a run has no baselines by its nature, or null when it should have them. The random and expert policies
 * play the run's own environment (config.env, runBaselines.ts); synthetic demo runs and imported training logs
 * have none, so for them "no baselines" is expected and is said in muted text, while a failure on a run that
 * has an environment stays an error.
 */
export function noBaselinesReason(rec: Pick<RunRecord, 'kind' | 'tags' | 'config'>): string | null {
  const env = rec.config.env;
  if (env !== null && typeof env === 'object') return null;
  if (rec.kind === 'imported') return 'imported from a training log, with no lab environment to play the random and expert policies on';
  if (rec.tags.includes('synthetic')) return 'synthetic demo curves, with no environment to play the random and expert policies on';
  return 'no environment in the config to play the random and expert policies on';
}

/** Runs with no baselines by nature (noBaselinesReason), one line per reason. */
export function groupNoBaselines(runs: readonly { id: string; name: string; reason: string }[]): BaselineErrorGroup[] {
  const groups = new Map<string, { id: string; name: string }[]>();
  for (const r of runs) {
    const g = groups.get(r.reason);
    if (g) g.push({ id: r.id, name: r.name });
    else groups.set(r.reason, [{ id: r.id, name: r.name }]);
  }
  return [...groups].map(([reason, rs]) => ({ runs: rs, reason }));
}
