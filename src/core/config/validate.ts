/**
 * Validation of a complete RunConfig: every field's type and range (from the field table) and the
 * cross-field rules. Each issue names the field, the value and the fix.
 */
import { FIELD_TABLE, type FieldValue } from './fields';
import { ENV_CATALOG, resolveSettings } from '../envs/index';
import { correctionIssues } from './correction';
import { coerceField, RESERVED_KEYS, reservedKeyMessage } from './parse';
import { PRESET_NAMES } from './presets/index';
import type { ConfigIssue, RunConfig } from './types';

/** The value at a dotted path, own properties only (`a.constructor` is not a path into Object.prototype). */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const k of path.split('.')) {
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, k)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof cur[k] !== 'object' || cur[k] === null) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1]] = value;
}

/** Group-based estimators compare the G rollouts of a task with each other. */
const GROUP_ESTIMATORS = new Set(['grpo', 'grpo_traj', 'drgrpo', 'gigpo', 'empg', 'rloo']);

/** Cross-field rules on a config whose fields are individually valid. */
export function crossFieldIssues(c: RunConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const a = c.algorithm;
  const pl = a.policyLoss;
  const add = (field: string, value: unknown, message: string) => issues.push({ field, value, message });
  if (pl.mode === 'gspo' && a.aggregation !== 'seq-mean-token-mean') {
    add(
      'algorithm.aggregation',
      a.aggregation,
      `GSPO always aggregates its policy loss with seq-mean-token-mean (spec §1.2d), so algorithm.aggregation = "${a.aggregation}" would only change the entropy and KL terms; set algorithm.aggregation=seq-mean-token-mean`,
    );
  }
  if (pl.mode === 'gspo' && pl.seqMask.enabled) {
    add(
      'algorithm.policyLoss.seqMask.enabled',
      true,
      "sequence masking applies to vanilla, cispo and sapo; GSPO already bounds the whole turn's ratio — set algorithm.policyLoss.seqMask.enabled=false or pick another policyLoss.mode",
    );
  }
  if (GROUP_ESTIMATORS.has(a.advantage.estimator) && c.rollout.groupSize < 2) {
    add(
      'rollout.groupSize',
      c.rollout.groupSize,
      `the ${a.advantage.estimator} advantage compares the G rollouts of a task, so rollout.groupSize = ${c.rollout.groupSize} gives every row a zero or meaningless advantage; set rollout.groupSize ≥ 2 (paper: 8)`,
    );
  }
  if (a.filter.enabled && c.rollout.groupSize < 2) {
    add(
      'algorithm.filter.enabled',
      true,
      `dynamic filtering drops groups whose G returns are all equal, and a group of ${c.rollout.groupSize} is always uniform; set rollout.groupSize ≥ 2 or algorithm.filter.enabled=false`,
    );
  }
  const maxRows = c.rollout.tasksPerStep * c.rollout.groupSize * c.env.maxSteps;
  if (c.optim.miniBatchRows > maxRows) {
    add(
      'optim.miniBatchRows',
      c.optim.miniBatchRows,
      `a step yields at most B·G·maxSteps = ${c.rollout.tasksPerStep}·${c.rollout.groupSize}·${c.env.maxSteps} = ${maxRows} turn rows, so optim.miniBatchRows = ${c.optim.miniBatchRows} can never fill a mini-batch; set optim.miniBatchRows ≤ ${maxRows} (equal to it = one on-policy update per step) or raise rollout.tasksPerStep / rollout.groupSize`,
    );
  }
  if (c.model.dModel % c.model.nHeads !== 0) {
    add(
      'model.nHeads',
      c.model.nHeads,
      `model.dModel = ${c.model.dModel} must be divisible by model.nHeads = ${c.model.nHeads}; pick nHeads from the divisors of dModel`,
    );
  }
  if (c.rollout.maxResponseTokens >= c.model.maxSeqLen) {
    add(
      'rollout.maxResponseTokens',
      c.rollout.maxResponseTokens,
      `rollout.maxResponseTokens = ${c.rollout.maxResponseTokens} leaves no room for the prompt in model.maxSeqLen = ${c.model.maxSeqLen}; lower it or raise model.maxSeqLen`,
    );
  }
  if (c.warmStart.source === 'shipped' && c.model.size === 'custom') {
    add(
      'warmStart.source',
      'shipped',
      'the app ships warm-start checkpoints for the named model sizes only; with model.size=custom set warmStart.source=scratch (train the BC recipe first) or none',
    );
  }
  if (a.overlong.enabled && Math.floor(c.rollout.maxResponseTokens * a.overlong.bufferFrac) < 1) {
    add(
      'algorithm.overlong.bufferFrac',
      a.overlong.bufferFrac,
      `⌊maxResponseTokens · bufferFrac⌋ = ⌊${c.rollout.maxResponseTokens} · ${a.overlong.bufferFrac}⌋ is 0 tokens, so the overlong penalty can never apply; raise algorithm.overlong.bufferFrac or rollout.maxResponseTokens`,
    );
  }
  if ((c.rollout.policyLag ?? 0) > 0 && c.compute.logProbEngine === 'onnxruntime') {
    add(
      'rollout.policyLag',
      c.rollout.policyLag,
      'with a policy lag the rollout engine holds a stale policy, so π_old must come from the trainer; set compute.logProbEngine=trainer or rollout.policyLag=0',
    );
  }
  const precision = c.compute.rolloutPrecision ?? 'fp32';
  if (precision !== 'fp32' && c.compute.rolloutEngine !== 'onnxruntime') {
    add(
      'compute.rolloutPrecision',
      precision,
      `rollout precision is a setting of the onnxruntime engine; tfjs rollouts use the trainer's float32 weights, so ${precision} would change nothing — set compute.rolloutEngine=onnxruntime or compute.rolloutPrecision=fp32`,
    );
  }
  if (precision !== 'fp32' && c.compute.logProbEngine === 'onnxruntime') {
    add(
      'compute.rolloutPrecision',
      precision,
      `compute.logProbEngine=onnxruntime takes π_old from the ${precision} rollout engine, so the trainer would train against the engine's numbers and mismatch/* would go unmeasured; set compute.logProbEngine=trainer or compute.rolloutPrecision=fp32`,
    );
  }
  issues.push(...correctionIssues(c));
  issues.push(...modelSourceIssues(c));
  return issues;
}

/** LoRA's target projections; mirrors LORA_TARGETS in src/core/llm/lora.ts (kept here: resolving loads no tfjs). */
export const LORA_TARGET_NAMES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;

/** The model source (lab or hf:PATH) and LoRA against the rest of the config. */
function modelSourceIssues(c: RunConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const add = (field: string, value: unknown, message: string) => issues.push({ field, value, message });
  const source = c.model.source ?? 'lab';
  const rank = c.model.lora?.rank ?? 0;
  const hf = source.startsWith('hf:') && source.length > 3;
  if (source !== 'lab' && !hf) {
    add(
      'model.source',
      source,
      `model.source must be "lab" (the lab's own model) or "hf:PATH" (a local Hugging Face model folder, e.g. hf:/models/Qwen2.5-0.5B-Instruct); got ${JSON.stringify(source)}`,
    );
    return issues;
  }
  if (!hf && rank > 0)
    add(
      'model.lora.rank',
      rank,
      `LoRA adapts a pretrained Hugging Face model: set model.source=hf:PATH (arlarena train --model hf:PATH) or model.lora.rank=0`,
    );
  if (rank > 0) {
    const targets = (c.model.lora?.targets ?? '').split('+').map((t) => t.trim());
    const unknown = targets.filter((t) => !(LORA_TARGET_NAMES as readonly string[]).includes(t));
    if (unknown.length > 0 || targets.length === 0)
      add(
        'model.lora.targets',
        c.model.lora?.targets,
        `model.lora.targets: ${unknown.map((t) => JSON.stringify(t)).join(', ')} is not a LoRA target; give projections joined by + from ${LORA_TARGET_NAMES.join(', ')}`,
      );
  }
  if (!hf) return issues;
  // compute.rolloutEngine: both engines sample an hf model (onnxruntime through its ONNX export with a KV cache,
  // re-exported after each update; tfjs from the trainer's own variables).
  if (c.compute.logProbEngine !== 'trainer')
    add('compute.logProbEngine', c.compute.logProbEngine, 'a hf: model computes π_old in the trainer; set compute.logProbEngine=trainer');
  if (c.compute.refLogProbEngine !== 'trainer')
    add(
      'compute.refLogProbEngine',
      c.compute.refLogProbEngine,
      'a hf: model computes π_ref in the trainer (the base model, adapters off under LoRA); set compute.refLogProbEngine=trainer',
    );
  if (c.compute.workers > 1)
    add(
      'compute.workers',
      c.compute.workers,
      'a hf: model trains in one thread (the gradient worker pool holds lab models only); set compute.workers=1',
    );
  if ((c.rollout.policyLag ?? 0) > 0)
    add('rollout.policyLag', c.rollout.policyLag, 'a hf: model samples with the current policy only; set rollout.policyLag=0');
  if (c.warmStart.source !== 'none')
    add(
      'warmStart.source',
      c.warmStart.source,
      'a hf: run starts from the checkpoint itself, which is also π_ref; the shipped and behaviour-cloned warm starts are for the lab model — set warmStart.source=none',
    );
  return issues;
}

/**
 * Validate a complete config (e.g. one read back from storage or an imported bundle): field types and
 * ranges, known preset, settings object, then the cross-field rules.
 */
export function validateConfig(config: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (typeof config !== 'object' || config === null) return [{ field: '', value: config, message: 'a run config must be an object' }];
  const preset = getPath(config, 'preset');
  if (typeof preset !== 'string' || !PRESET_NAMES.includes(preset)) {
    issues.push({
      field: 'preset',
      value: preset,
      message: `unknown preset ${JSON.stringify(preset)}; known presets: ${PRESET_NAMES.join(', ')}`,
    });
  }
  for (const f of FIELD_TABLE) {
    const v = getPath(config, f.path);
    if (v === undefined) {
      // A field newer than the stored config (an older run or bundle): its absence has a defined meaning.
      if (f.absentMeans !== undefined) continue;
      issues.push({ field: f.path, value: v, message: `${f.path} is missing; add it (default ${JSON.stringify(f.default)})` });
      continue;
    }
    const typed = typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string';
    if (!typed || (f.type !== 'string' && f.type !== 'enum' && typeof v === 'string')) {
      issues.push({
        field: f.path,
        value: v,
        message: `${f.path} = ${JSON.stringify(v)}: expected ${f.type === 'integer' ? 'an integer' : f.type === 'enum' ? `one of ${f.choices!.join(', ')}` : `a ${f.type}`}`,
      });
      continue;
    }
    const c = coerceField(f, v as FieldValue);
    if ('error' in c) issues.push({ field: f.path, value: v, message: c.error });
    else if (c.value !== v) issues.push({ field: f.path, value: v, message: `${f.path} = ${JSON.stringify(v)}: expected a ${f.type}` });
  }
  const settings = getPath(config, 'env.settings');
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    issues.push({
      field: 'env.settings',
      value: settings,
      message: 'env.settings must be an object of env-specific settings ({} for the defaults)',
    });
  } else {
    // A stored or imported config's settings get the same checks as a new run's overrides.
    const reserved = Object.keys(settings).filter((k) => RESERVED_KEYS.has(k));
    for (const k of reserved)
      issues.push({
        field: `env.settings.${k}`,
        value: (settings as Record<string, unknown>)[k],
        message: reservedKeyMessage(`env.settings.${k}`),
      });
    const envEntry = ENV_CATALOG.find((e) => e.name === getPath(config, 'env.name'));
    if (envEntry && reserved.length === 0) {
      try {
        resolveSettings(envEntry.name, envEntry.settings, settings as Record<string, unknown>);
      } catch (e) {
        issues.push({ field: 'env.settings', value: settings, message: (e as Error).message });
      }
    }
  }
  if (issues.length === 0) issues.push(...crossFieldIssues(config as RunConfig));
  return issues;
}
