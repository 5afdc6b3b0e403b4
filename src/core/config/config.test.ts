import { describe, expect, it } from 'vitest';
import { ENV_CATALOG } from '../envs/index';
import {
  CONFIG_FIELDS,
  DEFAULT_CONFIG,
  DEFAULT_PRESET,
  FIELD_TABLE,
  PRESET_NAMES,
  baseConfig,
  closeMatches,
  getPath,
  listPresets,
  parseSetArgs,
  resolveConfig,
  rolloutCorrectionOf,
  PRESSURE_LEVELS,
  validateConfig,
  type RunConfig,
} from './index';

function leafPaths(obj: unknown, prefix = ''): string[] {
  if (typeof obj !== 'object' || obj === null) return [prefix];
  return Object.entries(obj).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
}

function ok(preset: string, env: string, overrides: Record<string, string | number | boolean | null> = {}): RunConfig {
  const r = resolveConfig(preset, env, overrides);
  if (!r.config) throw new Error(r.issues.map((i) => `${i.field}: ${i.message}`).join('\n'));
  return r.config;
}

function issuesOf(preset: string, env: string, overrides: Record<string, string | number | boolean | null>) {
  const r = resolveConfig(preset, env, overrides);
  expect(r.config).toBeNull();
  return r.issues;
}

describe('field table and defaults', () => {
  it('documents every leaf of the config exactly once (env.settings belong to the env catalog)', () => {
    const leaves = leafPaths(DEFAULT_CONFIG).filter((p) => !p.startsWith('env.settings.') && p !== 'preset');
    expect(new Set(leaves)).toEqual(new Set(FIELD_TABLE.map((f) => f.path)));
    expect(new Set(FIELD_TABLE.map((f) => f.path)).size).toBe(FIELD_TABLE.length);
    for (const f of CONFIG_FIELDS) expect(f.doc.length, f.path).toBeGreaterThan(10);
  });

  it('DEFAULT_CONFIG is SAMPO on the laptop defaults, deep-frozen and valid', () => {
    expect(DEFAULT_PRESET).toBe('sampo');
    expect(DEFAULT_CONFIG.preset).toBe('sampo');
    expect(DEFAULT_CONFIG.model.size).toBe('nano');
    expect(DEFAULT_CONFIG.compute.backend).toBe('auto');
    expect(DEFAULT_CONFIG.rollout.maxResponseTokens).toBeLessThanOrEqual(32);
    expect(DEFAULT_CONFIG.env.historyWindow).toBeLessThanOrEqual(1);
    expect(Object.isFrozen(DEFAULT_CONFIG.algorithm.policyLoss)).toBe(true);
    expect(() => {
      (DEFAULT_CONFIG.optim as { lr: number }).lr = 1;
    }).toThrow();
    expect(validateConfig(DEFAULT_CONFIG)).toEqual([]);
  });

  it("base defaults are plain GRPO with the paper's stability recipe", () => {
    const b = baseConfig();
    expect(b.algorithm.policyLoss.mode).toBe('vanilla');
    expect(b.algorithm.kl).toEqual({ enabled: true, type: 'low_var_kl', coef: 0.01, inReward: false });
    expect(b.algorithm.entropyCoeff).toBe(0.001);
    expect(b.algorithm.invalidPenalty).toBe(0.1);
  });

  it("named model sizes mirror the policy model's own table", async () => {
    const { MODEL_SIZES } = await import('../agent/model');
    const { MODEL_SIZE_DIMS } = await import('./resolve');
    for (const [name, dims] of Object.entries(MODEL_SIZE_DIMS)) {
      const { why: _why, ...shape } = MODEL_SIZES[name as keyof typeof MODEL_SIZES];
      expect(dims, name).toEqual(shape);
    }
  });
});

describe('presets', () => {
  const envs = ENV_CATALOG.map((e) => e.name);

  it('every preset resolves on every available environment to a complete, valid, frozen config', () => {
    expect(PRESET_NAMES).toEqual([
      'sampo',
      'grpo',
      'grpo_st',
      'grpo_sm',
      'sapo',
      'cispo',
      'gspo',
      'gigpo',
      'empg',
      'dapo_grpo',
      'dapo_gigpo',
    ]);
    for (const p of PRESET_NAMES) {
      for (const e of envs) {
        const c = ok(p, e);
        expect(c.preset).toBe(p);
        expect(c.env.name).toBe(e);
        expect(validateConfig(c), `${p}/${e}`).toEqual([]);
        expect(Object.isFrozen(c.env.settings), `${p}/${e}`).toBe(true);
        expect(c.env.maxSteps).toBe(ENV_CATALOG.find((x) => x.name === e)!.horizon);
      }
    }
  });

  it("SAMPO carries the paper's choices on the four dimensions", () => {
    const c = ok('sampo', 'sokoban');
    expect(c.algorithm.policyLoss).toMatchObject({ mode: 'gspo', clipRatioLow: 3e-3, clipRatioHigh: 4e-3 });
    expect(c.algorithm.aggregation).toBe('seq-mean-token-mean');
    expect(c.algorithm.advantage).toMatchObject({ estimator: 'gigpo', gamma: 0.95, stepAdvantageW: 1, gigpoMode: 'mean_std_norm' });
    expect(c.algorithm.filter).toMatchObject({ enabled: true, maxRounds: 3 });
  });

  it('the method presets differ from GRPO on exactly their dimension', () => {
    expect(ok('cispo', 'sokoban').algorithm.policyLoss).toMatchObject({ mode: 'cispo', clipRatioLow: 1.0, clipRatioHigh: 0.2 });
    expect(ok('sapo', 'sokoban').algorithm.policyLoss).toMatchObject({ mode: 'sapo', tauPos: 1.0, tauNeg: 1.05 });
    expect(ok('grpo_st', 'sokoban').algorithm.aggregation).toBe('seq-mean-token-mean');
    expect(ok('grpo_sm', 'sokoban').algorithm.policyLoss.seqMask).toEqual({ enabled: true, delta: 3e-3 });
    expect(ok('empg', 'sokoban').algorithm.advantage.estimator).toBe('empg');
    expect(ok('dapo_grpo', 'sokoban').algorithm).toMatchObject({ filter: { enabled: true }, advantage: { estimator: 'grpo' } });
    expect(ok('grpo', 'sokoban').algorithm.filter.enabled).toBe(false);
  });

  it('env-specific script values: WebShop-style shop uses mean_norm GiGPO and GSPO 3e-2/4e-2', () => {
    if (!envs.includes('shop')) {
      expect(issuesOf('sampo', 'shop', {})[0].message).toMatch(/not available in this build; available environments: /);
      return;
    }
    expect(ok('sampo', 'shop').algorithm.advantage.gigpoMode).toBe('mean_norm');
    expect(ok('gspo', 'shop').algorithm.policyLoss.clipRatioLow).toBe(3e-2);
  });

  it('listPresets gives the cards: one recommended (SAMPO), a why and four dimension strings each', () => {
    const cards = listPresets();
    expect(cards.filter((c) => c.recommended).map((c) => c.name)).toEqual(['sampo']);
    for (const c of cards) {
      expect(c.why.length).toBeGreaterThan(20);
      expect(Object.keys(c.dimensions)).toEqual(['aggregation', 'clipping', 'advantage', 'filtering']);
      for (const k of Object.keys(c.overrides))
        expect(
          FIELD_TABLE.some((f) => f.path === k),
          k,
        ).toBe(true);
    }
  });
});

describe('overrides and validation messages (field, value, fix)', () => {
  it('a config stored before a field with a defined absence still validates; any other missing field is named', () => {
    // What a bundle or run record from an older build holds: no compute.workers (K = 1), no
    // compute.reuseFirstMiniBatch (the separate pass), no model.geluForm (tanh). Import and reproduce validate it.
    const old = JSON.parse(JSON.stringify(DEFAULT_CONFIG)) as {
      compute: Record<string, unknown>;
      model: Record<string, unknown>;
      optim: Record<string, unknown>;
    };
    delete old.compute.workers;
    delete old.compute.reuseFirstMiniBatch;
    delete old.model.geluForm;
    expect(validateConfig(old)).toEqual([]);
    delete old.optim.lr;
    expect(validateConfig(old).map((i) => i.message)).toEqual([expect.stringMatching(/optim.lr is missing; add it/)]);
  });

  it("a null override leaves the preset's value", () => {
    expect(ok('sampo', 'sokoban', { 'algorithm.policyLoss.clipRatioLow': null }).algorithm.policyLoss.clipRatioLow).toBe(3e-3);
  });

  it('string overrides are parsed by the field type', () => {
    const c = ok('sampo', 'sokoban', { 'optim.lr': '3e-5', 'algorithm.kl.enabled': 'false', 'rollout.groupSize': 8 });
    expect(c.optim.lr).toBe(3e-5);
    expect(c.algorithm.kl.enabled).toBe(false);
    expect(c.rollout.groupSize).toBe(8);
  });

  it('unknown fields list close matches; bad values say what is expected', () => {
    const issues = issuesOf('sampo', 'sokoban', {
      'optim.lrr': 1,
      'optim.lr': 'fast',
      'rollout.groupSize': 2.5,
      'algorithm.kl.type': 'k3',
    });
    const by = Object.fromEntries(issues.map((i) => [i.field, i]));
    expect(by['optim.lrr'].message).toMatch(/did you mean "optim.lr"/);
    expect(by['optim.lr']).toMatchObject({ value: 'fast' });
    expect(by['optim.lr'].message).toMatch(/expected a finite number/);
    expect(by['rollout.groupSize'].message).toMatch(/whole number/);
    expect(by['algorithm.kl.type'].message).toMatch(/expected one of kl, abs, mse, low_var_kl/);
  });

  it('range: clipRatioLow in [0, 1], dual clip c > 1', () => {
    expect(issuesOf('grpo', 'sokoban', { 'algorithm.policyLoss.clipRatioLow': 1.5 })[0].message).toMatch(
      /clipRatioLow = 1.5 is out of range: it must be ≥ 0 and ≤ 1/,
    );
    expect(issuesOf('grpo', 'sokoban', { 'algorithm.policyLoss.clipRatioC': 1 })[0].message).toMatch(/must be > 1/);
  });

  it('cross-field: GSPO needs seq-mean-token-mean and no sequence masking', () => {
    const issues = issuesOf('gspo', 'sokoban', { 'algorithm.aggregation': 'token-mean', 'algorithm.policyLoss.seqMask.enabled': true });
    expect(issues.map((i) => i.field).sort()).toEqual(['algorithm.aggregation', 'algorithm.policyLoss.seqMask.enabled']);
    expect(issues.find((i) => i.field === 'algorithm.aggregation')!.message).toMatch(/set algorithm.aggregation=seq-mean-token-mean/);
  });

  it('cross-field: group advantages and filtering need G ≥ 2', () => {
    const issues = issuesOf('dapo_grpo', 'sokoban', { 'rollout.groupSize': 1, 'optim.miniBatchRows': 8 });
    expect(issues.find((i) => i.field === 'rollout.groupSize')!.message).toMatch(/set rollout.groupSize ≥ 2/);
    expect(issues.find((i) => i.field === 'algorithm.filter.enabled')!.message).toMatch(/always uniform/);
  });

  it('cross-field: miniBatchRows vs the rows a step can produce', () => {
    const i = issuesOf('grpo', 'sokoban', { 'optim.miniBatchRows': 100000 }).find((x) => x.field === 'optim.miniBatchRows')!;
    expect(i.value).toBe(100000);
    expect(i.message).toMatch(/B·G·maxSteps = 4·4·15 = 240 .* set optim.miniBatchRows ≤ 240/);
  });

  it('model dims only with size custom; custom dims are checked; custom cannot use the shipped checkpoint', () => {
    expect(issuesOf('grpo', 'sokoban', { 'model.dModel': 32 })[0].message).toMatch(/only applies with model.size=custom/);
    const issues = issuesOf('grpo', 'sokoban', { 'model.size': 'custom', 'model.dModel': 30, 'model.nHeads': 4 });
    expect(issues.find((i) => i.field === 'model.nHeads')!.message).toMatch(/divisible/);
    expect(issues.find((i) => i.field === 'warmStart.source')!.message).toMatch(/warmStart.source=scratch/);
    const c = ok('grpo', 'sokoban', { 'model.size': 'small' });
    expect(c.model.dModel).toBe(192);
  });

  it("context: a named size takes the env's context when larger, and the user may set it with any size", () => {
    expect(ok('grpo', 'sokoban').model.maxSeqLen).toBe(384);
    expect(ok('grpo', 'shop').model.maxSeqLen).toBe(640);
    expect(ok('grpo', 'shop', { 'model.size': 'small' }).model.maxSeqLen).toBe(768);
    const c = ok('grpo', 'sokoban', { 'model.maxSeqLen': 512 });
    expect([c.model.size, c.model.dModel, c.model.maxSeqLen]).toEqual(['nano', 64, 512]);
    expect(ok('grpo', 'shop', { 'model.maxSeqLen': 256 }).model.maxSeqLen).toBe(256);
    const short = issuesOf('grpo', 'sokoban', { 'model.maxSeqLen': 40, 'rollout.maxResponseTokens': 48 });
    expect(short.find((i) => i.field === 'rollout.maxResponseTokens')!.message).toMatch(/raise model.maxSeqLen$/);
  });

  it('env settings go to the env catalog; env.maxSteps is mirrored into a maxSteps setting', () => {
    const c = ok('grpo', 'sokoban', { 'env.maxSteps': 20 });
    expect(c.env.settings.maxSteps).toBe(20);
    const d = ok('grpo', 'sokoban', { 'env.settings.maxSteps': '12' });
    expect(d.env.maxSteps).toBe(12);
    const bad = issuesOf('grpo', 'sokoban', { 'env.settings.walls': 3 });
    expect(bad[0].field).toBe('env.settings');
    expect(bad[0].message).toMatch(/unknown setting "walls"/);
  });

  it('preset and env are arguments, not overrides; unknown ones list the known names', () => {
    expect(issuesOf('grpo', 'sokoban', { preset: 'gspo' })[0].message).toMatch(/preset argument/);
    expect(issuesOf('ppo', 'sokoban', {})[0].message).toMatch(/unknown preset "ppo"; known presets: sampo, grpo/);
    expect(issuesOf('grpo', 'atari', {})[0]).toMatchObject({ field: 'env.name', value: 'atari' });
  });

  it('validateConfig catches a tampered stored config', () => {
    const c = JSON.parse(JSON.stringify(DEFAULT_CONFIG));
    c.optim.lr = 'x';
    delete c.training.steps;
    const issues = validateConfig(c);
    expect(issues.map((i) => i.field).sort()).toEqual(['optim.lr', 'training.steps']);
    expect(getPath(DEFAULT_CONFIG, 'optim.lr')).toBe(1e-4);
  });
});

describe('--set parsing', () => {
  it('parses typed values and reports malformed or unknown keys', () => {
    const r = parseSetArgs([
      'optim.lr=1e-5',
      'algorithm.filter.enabled=yes',
      'rollout.groupSize=8',
      'clipRatioHigh=0.3',
      'oops',
      'env.settings.boxes=2',
    ]);
    expect(r.overrides).toEqual({ 'optim.lr': 1e-5, 'algorithm.filter.enabled': true, 'rollout.groupSize': 8, 'env.settings.boxes': 2 });
    expect(r.issues.map((i) => i.field)).toEqual(['clipRatioHigh', 'oops']);
    expect(r.issues[0].message).toMatch(/did you mean "algorithm.policyLoss.clipRatioHigh"/);
    expect(r.issues[1].message).toMatch(/expected key=value/);
  });

  it('close matches by last segment and edit distance', () => {
    expect(closeMatches('entropyCoef')).toContain('algorithm.entropyCoeff');
    expect(closeMatches('optim.gradclip')).toContain('optim.gradClip');
    expect(closeMatches('zzzzzzzzzz')).toEqual([]);
  });
});

describe('rollout correction fields (algorithm.rolloutCorrection)', () => {
  it('are off by default, and a stored config without them is valid and resolves to no correction', () => {
    const { config } = resolveConfig('grpo', 'sokoban', {});
    expect(config!.algorithm.rolloutCorrection).toMatchObject({ is: 'off', rs: '', bypassMode: false });
    const old = JSON.parse(JSON.stringify(config)) as Record<string, any>;
    delete old.algorithm.rolloutCorrection;
    expect(validateConfig(old)).toEqual([]);
    const rc = rolloutCorrectionOf(old as never);
    expect(rc).toMatchObject({ bypass: false, decoupled: false, params: { rolloutIs: null, rolloutRs: null } });
  });

  it("resolve verl's parameters from the fields", () => {
    const { config, issues } = resolveConfig('grpo', 'sokoban', {
      'algorithm.rolloutCorrection.is': 'sequence',
      'algorithm.rolloutCorrection.rs': 'token_k1,seq_max_k3',
      'algorithm.rolloutCorrection.rsThreshold': '0.5_2,0.1',
    });
    expect(issues).toEqual([]);
    expect(rolloutCorrectionOf(config!)).toMatchObject({
      decoupled: true,
      params: { rolloutIs: 'sequence', rolloutIsThreshold: 2, rolloutRs: 'token_k1,seq_max_k3', rolloutRsThreshold: '0.5_2,0.1' },
    });
  });

  it('cross-field rules name the field and the fix', () => {
    const issue = (o: Record<string, string>) =>
      resolveConfig('grpo', 'sokoban', o)
        .issues.map((i) => `${i.field}: ${i.message}`)
        .join('\n');
    expect(issue({ 'algorithm.rolloutCorrection.rs': 'token_k2' })).toMatch(
      /rolloutCorrection.rsThreshold: algorithm.rolloutCorrection.rsThreshold must be given/,
    );
    expect(issue({ 'algorithm.rolloutCorrection.rs': 'seq_max_k1', 'algorithm.rolloutCorrection.rsThreshold': '2' })).toMatch(
      /rolloutCorrection.rs: unknown algorithm.rolloutCorrection.rs option "seq_max_k1"; known options: token_k1/,
    );
    expect(issue({ 'algorithm.rolloutCorrection.rs': 'token_k2', 'algorithm.rolloutCorrection.rsThreshold': '0.5_2' })).toMatch(
      /single upper bound/,
    );
    expect(issue({ 'algorithm.rolloutCorrection.rsThreshold': '2' })).toMatch(/no effect without rejection options/);
    // IcePop's interval is never empty: isThresholdLower ∈ [0, 1], isThreshold > 1.
    expect(issue({ 'algorithm.rolloutCorrection.isThreshold': '1' })).toMatch(/isThreshold/);
    expect(issue({ 'algorithm.rolloutCorrection.isBatchNormalize': 'true' })).toMatch(/set is=token or is=sequence/);
    expect(
      resolveConfig('cispo', 'sokoban', { 'algorithm.rolloutCorrection.bypassMode': 'true' })
        .issues.map((i) => i.message)
        .join(),
    ).toMatch(/set algorithm.policyLoss.mode=vanilla/);
    expect(issue({ 'algorithm.rolloutCorrection.lossType': 'reinforce' })).toMatch(/set algorithm.rolloutCorrection.bypassMode=true/);
    expect(issue({ 'algorithm.rolloutCorrection.is': 'token', 'compute.logProbEngine': 'onnxruntime' })).toMatch(
      /set compute.logProbEngine=trainer/,
    );
    expect(
      resolveConfig('grpo', 'sokoban', {
        'algorithm.rolloutCorrection.bypassMode': 'true',
        'algorithm.rolloutCorrection.lossType': 'reinforce',
        'algorithm.rolloutCorrection.is': 'token',
      }).issues,
    ).toEqual([]);
  });
});

describe('pressure ladder (training.pressure) and policy lag', () => {
  it('a level sets the same four knobs for every preset, after the preset and before the user', () => {
    for (const preset of ['grpo', 'cispo', 'sampo']) {
      const c = resolveConfig(preset, 'sokoban', { 'training.pressure': 3 }).config!;
      expect([c.optim.miniBatchRows, c.optim.epochs, c.optim.lr, c.rollout.policyLag, c.training.pressure]).toEqual([32, 1, 5e-4, 1, 3]);
    }
    const sampo = resolveConfig('sampo', 'sokoban', { 'training.pressure': 2 }).config!;
    expect(sampo.algorithm.policyLoss.clipRatioLow).toBe(0.003); // the preset's own values stay
    expect(resolveConfig('grpo', 'sokoban', { 'training.pressure': '4', 'optim.lr': '2e-4' }).config!.optim.lr).toBe(2e-4);
    expect(PRESSURE_LEVELS.map((l) => l.level)).toEqual([0, 1, 2, 3, 4]);
    for (const l of PRESSURE_LEVELS) expect(l.why.length).toBeGreaterThan(20);
    expect(resolveConfig('grpo', 'sokoban', { 'training.pressure': 5 }).issues[0].field).toBe('training.pressure');
  });

  it("policy lag needs the trainer's π_old", () => {
    const { issues } = resolveConfig('grpo', 'sokoban', { 'rollout.policyLag': 1, 'compute.logProbEngine': 'onnxruntime' });
    expect(issues.map((i) => i.message).join()).toMatch(/set compute.logProbEngine=trainer or rollout.policyLag=0/);
  });
});
