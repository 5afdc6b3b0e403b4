/**
 * warmStart.source = 'shipped' (the presets' default): the run's π_ref is the behaviour-cloned
 * checkpoint shipped in resources/warmstart/<env>/. This loader is strict — a run that asks for the shipped start
 * gets exactly it or a clear error, never a silent fallback to BC from scratch (that is warmStart.source =
 * 'scratch', one setting away):
 *   - the directory or its manifest.json is missing → error naming the path and the two fixes;
 *   - a file does not match its SHA-256 in the manifest → error naming the file (readWarmStartDir);
 *   - the run's model (size, dims, context), history window or env settings differ from the ones the checkpoint
 *     was cloned with → error naming each field, the checkpoint's value and the run's.
 * Why these must match: the weights' shapes follow the model dims; the tokenizer and the prompt distribution
 * follow the env, its settings and the history window (a k = 1 checkpoint has never seen a k = 2 prompt). The
 * horizon (env.maxSteps) may differ: it only decides how many turns an episode may take.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunConfig } from '../../core/config/types';
import type { WarmStartLoader } from '../../core/training/types';
import { resolveModelConfig } from '../../core/agent/model';
import { modelSpecOf } from '../../core/training/warmstart';
import { readWarmStartDir, shippedWarmStartRoot } from './warmStartFiles';

export function shippedWarmStartDir(env: string, root = shippedWarmStartRoot()): string {
  return join(root, env);
}

export interface Mismatch {
  readonly field: string;
  readonly checkpoint: unknown;
  readonly run: unknown;
}

/** Fields where the run differs from the checkpoint's recipe (empty = compatible). */
export function warmStartMismatches(config: RunConfig, recipe: Record<string, unknown>, vocabSize: number): Mismatch[] {
  const out: Mismatch[] = [];
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  const check = (field: string, checkpoint: unknown, run: unknown): void => {
    if (!same(checkpoint, run)) out.push({ field, checkpoint, run });
  };
  check('env.name', recipe.env, config.env.name);
  check('env.historyWindow', recipe.historyWindow, config.env.historyWindow);
  const ckSettings = (recipe.envSettings ?? {}) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(ckSettings), ...Object.keys(config.env.settings)])].filter((k) => k !== 'maxSteps').sort();
  for (const k of keys) check(`env.settings.${k}`, ckSettings[k], config.env.settings[k]);
  check('model.size', recipe.modelSize, config.model.size);
  const ck = (recipe.model ?? {}) as Record<string, unknown>;
  const want = resolveModelConfig(modelSpecOf(config), vocabSize);
  for (const k of ['dModel', 'nLayers', 'nHeads', 'dFF', 'maxSeqLen'] as const) check(`model.${k}`, ck[k], want[k]);
  return out;
}

/** TrainerDeps.loadWarmStart for one run: resources/warmstart/<env>, verified and checked against the run. */
export function shippedLoaderFor(config: RunConfig, root = shippedWarmStartRoot()): WarmStartLoader {
  return async ({ env }) => {
    const dir = shippedWarmStartDir(env, root);
    if (!existsSync(join(dir, 'manifest.json'))) {
      throw new Error(
        `warmStart.source=shipped: no shipped ${env} checkpoint at ${dir} (manifest.json missing). ` +
          `Rebuild it with \`arlarena warmstart --env ${env} --out ${dir}\`, or set warmStart.source=scratch to behaviour-clone one for this run.`,
      );
    }
    const { files, manifest, recipe } = await readWarmStartDir(dir);
    const model = JSON.parse(new TextDecoder().decode(files['model.json'])) as { config?: { vocabSize?: number } };
    const bad = warmStartMismatches(config, recipe, model.config?.vocabSize ?? 0);
    if (bad.length > 0) {
      const list = bad.map((m) => `${m.field}: checkpoint ${JSON.stringify(m.checkpoint)}, run ${JSON.stringify(m.run)}`).join('; ');
      throw new Error(
        `warmStart.source=shipped: the run does not match the shipped ${env} checkpoint (${list}). The weights, tokenizer and prompts ` +
          `must be the ones it was cloned with: set those fields to the checkpoint's values, or set warmStart.source=scratch.`,
      );
    }
    return { files, ref: `shipped:${env}@${manifest.files['weights.bin'].sha256.slice(0, 12)}` };
  };
}
