/**
 * What an imported run's record says about its recipe, from the config its log revealed (a verl console log's
 * echoed Hydra config, a JSONL/TRL run's args): the config itself (so config diff works across imported runs),
 * a preset (verl's advantage estimator, e.g. `gae` or `grpo`, else 'imported'), an env (the dataset, e.g.
 * `gsm8k` from `data.train_files`, else 'external') and a seed (0 unless the config names one).
 */
import { configAt, importedSeed } from '../../shared/importedSeed';

export interface ImportedRecipe {
  readonly preset: string;
  readonly env: string;
  readonly seed: number;
  readonly config: Record<string, unknown>;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A name safe for the record's env / preset fields (short, printable). */
function label(s: string): string {
  return s
    .replace(/[^A-Za-z0-9._+-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
}

const GENERIC_STEMS = /^(train|training|data|dataset|test|val|validation)$/i;

/** gsm8k from `~/data/gsm8k/train.parquet`; `math` from `['/d/math.parquet']`; null when nothing fits. */
export function datasetName(trainFiles: unknown): string | null {
  let s: string | undefined;
  if (typeof trainFiles === 'string') s = trainFiles;
  else if (Array.isArray(trainFiles) && typeof trainFiles[0] === 'string') s = trainFiles[0];
  if (!s) return null;
  const first = s
    .replace(/^\[|\]$/g, '')
    .split(',')[0]
    .trim()
    .replace(/^['"]|['"]$/g, '');
  const parts = first.split(/[\\/]/).filter((p) => p.length > 0);
  const file = parts[parts.length - 1];
  if (!file) return null;
  const stem = file.replace(/\.[A-Za-z0-9]+$/, '');
  const name = GENERIC_STEMS.test(stem) && parts.length > 1 ? parts[parts.length - 2] : stem;
  return label(name) || null;
}

export function describeConfig(config: Record<string, unknown> | undefined): ImportedRecipe {
  const cfg = isObj(config) ? config : {};
  const est = configAt(cfg, 'algorithm.adv_estimator');
  const preset = typeof est === 'string' && label(est) ? label(est) : 'imported';
  const dataset =
    datasetName(configAt(cfg, 'data.train_files')) ??
    (typeof configAt(cfg, 'dataset_name') === 'string' ? label(configAt(cfg, 'dataset_name') as string) : null);
  const seed = importedSeed(cfg) ?? 0;
  return { preset, env: dataset || 'external', seed, config: { ...cfg } };
}
