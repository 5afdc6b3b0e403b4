/**
 * runs.baselines — what a run's validation success is read against: the uniform-random and the
 * expert policy on the very held-out tasks the trainer validates on (heldOutSeeds(training.valEpisodes), group
 * size 1), and, for warmStart.source = 'shipped', what the shipped checkpoint (π_ref) scored on its own held-out
 * set (resources/warmstart/<env>/heldout.json, written by `arlarena warmstart`).
 *
 * The baselines are a pure function of (env spec, episodes), so each is computed once per process and kept.
 * They run on the main thread: ~0.5–3 ms per task on these envs (64 tasks ≈ 0.1–0.2 s), fine for the laptop
 * defaults; a run configured with tens of thousands of validation episodes blocks the process for seconds once.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { SuccessInterval, type RunBaselines, type RunRecord } from '../../../shared/api';
import { err, ok, type Result } from '../../../shared/result';
import { baselines } from '../../../core/training/evaluate';
import type { EnvSpec } from '../../../core/training/data';
import { ENV_CATALOG, heldOutSeeds } from '../../../core/envs/index';
import { MAX_HELD_OUT } from '../../../core/envs/splits';
import { sha256, shippedWarmStartRoot, type Manifest } from '../../store/warmStartFiles';

/** The part of a stored run config the baselines depend on (the engine's RunConfig has all of it). */
const BaselineConfig = z.object({
  env: z.object({
    name: z.string(),
    settings: z.record(z.string(), z.unknown()),
    maxSteps: z.number().int().min(1),
    historyWindow: z.number().int().min(0),
  }),
  training: z.object({ valEpisodes: z.number().int().min(1).max(MAX_HELD_OUT), valTemperature: z.number().optional() }),
  warmStart: z.object({ source: z.string() }).optional(),
});
type BaselineConfig = z.infer<typeof BaselineConfig>;

const HeldOutFile = z.object({
  temperatureSampled: z.number().optional(),
  greedy: z.object({ success: SuccessInterval }).optional(),
  sampled: z.object({ success: SuccessInterval }).optional(),
});

type Pair = Pick<RunBaselines, 'random' | 'expert'>;

export interface RunBaselinesOptions {
  /** Where shipped warm starts live (default resources/warmstart); tests point it elsewhere. */
  readonly warmStartRoot?: string;
}

/** The same EnvSpec the trainer builds (envSpecOf in src/core/training/warmstart.ts, which pulls tfjs into main). */
function specOf(c: BaselineConfig): EnvSpec {
  return { name: c.env.name, settings: { ...c.env.settings }, maxSteps: c.env.maxSteps, historyWindow: c.env.historyWindow };
}

function cacheKey(spec: EnvSpec, episodes: number): string {
  const settings = Object.keys(spec.settings)
    .sort()
    .map((k) => [k, spec.settings[k]]);
  return JSON.stringify([spec.name, settings, spec.maxSteps, spec.historyWindow, episodes]);
}

/** Keeps the last few hundred (spec, episodes) results; each is four numbers twice. */
const CACHE_LIMIT = 256;

export function createRunBaselines(options: RunBaselinesOptions = {}): (rec: RunRecord) => Promise<Result<RunBaselines>> {
  const cache = new Map<string, Promise<Pair>>();

  function computed(spec: EnvSpec, episodes: number): Promise<Pair> {
    const key = cacheKey(spec, episodes);
    let hit = cache.get(key);
    if (!hit) {
      hit = Promise.resolve().then(() => baselines(spec, heldOutSeeds(episodes)));
      hit.catch(() => cache.delete(key));
      cache.set(key, hit);
      if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    }
    return hit;
  }

  return async (rec) => {
    const parsed = BaselineConfig.safeParse(rec.config);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = `config.${issue.path.map(String).join('.')}`;
      let value: unknown = rec.config;
      for (const k of issue.path)
        value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[k as PropertyKey] : undefined;
      const what = value === undefined ? `has no ${where}` : `has an unusable ${where} (${JSON.stringify(value)}: ${issue.message})`;
      return err('UNAVAILABLE', `run ${rec.id} ${what}, so there are no validation tasks to run baselines on`, {
        field: 'runId',
        hint: 'synthetic demo runs have no environment config; baselines exist for runs started from New run or `arlarena train`',
      });
    }
    const c = parsed.data;
    if (!ENV_CATALOG.some((e) => e.name === c.env.name)) {
      return err(
        'UNAVAILABLE',
        `run ${rec.id} trained on environment "${c.env.name}", which this build does not have; known environments: ${ENV_CATALOG.map((e) => e.name).join(', ')}`,
        {
          field: 'runId',
          hint: 'open the run in the app version it was made with (see its app version)',
        },
      );
    }
    const spec = specOf(c);
    let pair: Pair;
    try {
      pair = await computed(spec, c.training.valEpisodes);
    } catch (e) {
      return err(
        'UNAVAILABLE',
        `run ${rec.id}: the random and expert baselines could not run on its env config: ${e instanceof Error ? e.message : String(e)}`,
        {
          field: 'runId',
          hint: "the stored env settings are not valid in this app version; see the run's resolved config",
        },
      );
    }
    const warmStart = c.warmStart?.source === 'shipped' ? await shippedHeldOut(c, options.warmStartRoot ?? shippedWarmStartRoot()) : null;
    return ok({ env: spec.name, episodes: c.training.valEpisodes, random: pair.random, expert: pair.expert, warmStart });
  };
}

/** The shipped checkpoint's held-out results, verified against its manifest; a note says why when absent. */
async function shippedHeldOut(c: BaselineConfig, root: string): Promise<NonNullable<RunBaselines['warmStart']>> {
  const env = c.env.name;
  // Same directory as shippedWarmStartDir (src/main/store/shippedWarmStart.ts), which the trainer loads.
  const dir = join(root, env);
  const rebuild = `rebuild it with \`arlarena warmstart --env ${env} --out ${dir}\``;
  const none = (note: string, source = `shipped:${env}`): NonNullable<RunBaselines['warmStart']> => ({
    source,
    sampledTemperature: null,
    note,
  });
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return none(`no shipped ${env} checkpoint at ${dir} (manifest.json missing or unreadable): ${rebuild}`);
  }
  const weights = manifest.files?.['weights.bin']?.sha256;
  const source = typeof weights === 'string' ? `shipped:${env}@${weights.slice(0, 12)}` : `shipped:${env}`;
  const verified = async (name: string): Promise<unknown> => {
    const want = manifest.files?.[name]?.sha256;
    if (!want) throw new Error(`${name} is not listed in ${dir}/manifest.json`);
    const data = await readFile(join(dir, name));
    if (sha256(data) !== want) throw new Error(`${dir}/${name} does not match its SHA-256 in manifest.json`);
    return JSON.parse(data.toString('utf8'));
  };
  let held: z.infer<typeof HeldOutFile>;
  let recipe: { maxSteps?: unknown } = {};
  try {
    const parsed = HeldOutFile.safeParse(await verified('heldout.json'));
    if (!parsed.success) throw new Error(`${dir}/heldout.json is not in the format \`arlarena warmstart\` writes`);
    held = parsed.data;
    recipe = ((await verified('recipe.json').catch(() => ({}))) ?? {}) as { maxSteps?: unknown };
  } catch (e) {
    return none(`the checkpoint's held-out results are unavailable: ${(e as Error).message}; ${rebuild}`, source);
  }
  const greedy = held.greedy?.success;
  const sampled = held.sampled?.success;
  const notes: string[] = [];
  if (!greedy && !sampled) notes.push(`${dir}/heldout.json has no greedy or sampled result; ${rebuild}`);
  if (typeof recipe.maxSteps === 'number' && recipe.maxSteps !== c.env.maxSteps) {
    notes.push(`evaluated with env.maxSteps ${recipe.maxSteps}; this run uses ${c.env.maxSteps}`);
  }
  const T = held.temperatureSampled ?? null;
  if (sampled && T !== null && c.training.valTemperature !== undefined && T !== c.training.valTemperature) {
    notes.push(`sampled at temperature ${T}; this run validates at ${c.training.valTemperature}`);
  }
  return {
    source,
    ...(greedy ? { greedy } : {}),
    ...(sampled ? { sampled } : {}),
    sampledTemperature: T,
    note: notes.length ? notes.join('; ') : null,
  };
}
