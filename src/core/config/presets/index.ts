/**
 * The paper's methods as named overrides of the base config (spec §1, §2, §5.1; sum.png): each preset says
 * why it exists in one line and describes the four dimensions in short strings (PresetInfo, src/shared/api.ts).
 * Env-specific values follow the release scripts: ALFWorld's for household and the grid worlds, WebShop's for
 * shop. Laptop scaling (cold start, batch) is documented on the fields themselves (fields.ts).
 */
import type { PresetInfo } from '../../../shared/api';
import type { FieldValue } from '../fields';
import type { EnvName } from '../types';

export interface PresetDef {
  readonly name: string;
  readonly label: string;
  readonly why: string;
  readonly recommended: boolean;
  readonly dimensions: PresetInfo['dimensions'];
  /** Dotted-path overrides of the base config. */
  readonly overrides: Readonly<Record<string, FieldValue>>;
  /** Extra overrides for one environment (applied after `overrides`). */
  readonly envOverrides?: Partial<Record<EnvName, Readonly<Record<string, FieldValue>>>>;
}

const GRPO_DIMS = {
  aggregation: 'token-mean',
  clipping: 'token clip ε 0.2/0.2 + dual clip 3',
  advantage: 'GRPO, cross-step group norm',
  filtering: 'off',
};
const FILTER_ON = { 'algorithm.filter.enabled': true, 'algorithm.filter.maxRounds': 3 };
// Cold start: paper 15 of 200 steps (ALFWorld) and 5 of 250 (WebShop); our default run is 40 steps.
const COLD_START = { household: { 'algorithm.filter.coldStartSteps': 3 }, shop: { 'algorithm.filter.coldStartSteps': 1 } } as const;
const GIGPO = {
  'algorithm.advantage.estimator': 'gigpo',
  'algorithm.advantage.gamma': 0.95,
  'algorithm.advantage.stepAdvantageW': 1.0,
  'algorithm.advantage.gigpoMode': 'mean_std_norm',
} as const;
const GIGPO_SHOP = { 'algorithm.advantage.gigpoMode': 'mean_norm' } as const;
const GSPO_CLIP = {
  'algorithm.policyLoss.mode': 'gspo',
  'algorithm.policyLoss.clipRatioLow': 3e-3,
  'algorithm.policyLoss.clipRatioHigh': 4e-3,
  'algorithm.aggregation': 'seq-mean-token-mean',
} as const;

export const PRESETS: readonly PresetDef[] = [
  {
    name: 'sampo',
    label: 'SAMPO',
    recommended: true,
    why: "The paper's method: sequence-level clipping, turn-level (GiGPO) advantage and dynamic filtering — steady, monotone gains without the collapse of tolerant clipping.",
    dimensions: {
      aggregation: 'seq-mean-token-mean',
      clipping: 'GSPO sequence ratio, ε 3e-3/4e-3',
      advantage: 'GiGPO, ω 1, γ 0.95',
      filtering: 'DAPO, 3 rounds, cold start',
    },
    overrides: { ...GSPO_CLIP, ...GIGPO, ...FILTER_ON },
    envOverrides: { household: COLD_START.household, shop: { ...GIGPO_SHOP, ...COLD_START.shop } },
  },
  {
    name: 'grpo',
    label: 'GRPO',
    recommended: false,
    why: 'The base method every dimension is compared against: token clip, token-mean, group-normalised episode outcome.',
    dimensions: GRPO_DIMS,
    overrides: {},
  },
  {
    name: 'grpo_st',
    label: 'GRPO_ST',
    recommended: false,
    why: 'Loss aggregation: each turn weighs the same instead of each token; helped ALFWorld, hurt the other tasks in the paper.',
    dimensions: { ...GRPO_DIMS, aggregation: 'seq-mean-token-mean' },
    overrides: { 'algorithm.aggregation': 'seq-mean-token-mean' },
  },
  {
    name: 'grpo_sm',
    label: 'GRPO_SM',
    recommended: false,
    why: 'Sequence masking: drop negative-advantage turns already pushed off-policy — the rows the paper finds drive collapse (δ 3e-3 as the release scripts).',
    dimensions: { ...GRPO_DIMS, clipping: 'token clip 0.2/0.2 + sequence masking δ 3e-3' },
    overrides: { 'algorithm.policyLoss.seqMask.enabled': true, 'algorithm.policyLoss.seqMask.delta': 3e-3 },
  },
  {
    name: 'sapo',
    label: 'SAPO',
    recommended: false,
    why: 'Tolerant clipping with a soft gate (τ 1.0/1.05): fast early gains, then collapse in the paper — run it to watch the detector fire.',
    dimensions: { ...GRPO_DIMS, clipping: 'SAPO soft gate τ 1.0/1.05' },
    overrides: { 'algorithm.policyLoss.mode': 'sapo', 'algorithm.policyLoss.tauPos': 1.0, 'algorithm.policyLoss.tauNeg': 1.05 },
  },
  {
    name: 'cispo',
    label: 'CISPO',
    recommended: false,
    why: 'Tolerant clipping: stop-gradient clipped IS weight (no lower bound, cap 1.2), gradient never cut; collapses after early gains in the paper.',
    dimensions: { ...GRPO_DIMS, clipping: 'CISPO sg(clip(w, 0, 1.2))·log π' },
    overrides: {
      'algorithm.policyLoss.mode': 'cispo',
      'algorithm.policyLoss.clipRatioLow': 1.0,
      'algorithm.policyLoss.clipRatioHigh': 0.2,
    },
  },
  {
    name: 'gspo',
    label: 'GSPO',
    recommended: false,
    why: 'Sequence-level clipping of the per-turn length-normalised ratio: slow, steady, monotone improvement (the strongest IS variant in the paper).',
    dimensions: { ...GRPO_DIMS, aggregation: 'seq-mean-token-mean', clipping: 'GSPO sequence ratio, ε 3e-3/4e-3' },
    overrides: { ...GSPO_CLIP },
    envOverrides: { shop: { 'algorithm.policyLoss.clipRatioLow': 3e-2, 'algorithm.policyLoss.clipRatioHigh': 4e-2 } },
  },
  {
    name: 'gigpo',
    label: 'GiGPO',
    recommended: false,
    why: 'Turn-level credit: episode outcome plus a step term over identical anchor states with discounted returns — the strongest advantage on ALFWorld.',
    dimensions: { ...GRPO_DIMS, advantage: 'GiGPO, ω 1, γ 0.95' },
    overrides: { ...GIGPO },
    envOverrides: { shop: GIGPO_SHOP },
  },
  {
    name: 'empg',
    label: 'EMPG',
    recommended: false,
    why: 'Entropy-modulated advantage: confident turns get larger updates plus a bonus for a clear next turn (k 1, k_f 1, ζ 0.05).',
    dimensions: { ...GRPO_DIMS, advantage: 'EMPG over GRPO, k 1, ζ 0.05' },
    overrides: {
      'algorithm.advantage.estimator': 'empg',
      'algorithm.advantage.empg.k': 1,
      'algorithm.advantage.empg.kf': 1,
      'algorithm.advantage.empg.zeta': 0.05,
    },
  },
  {
    name: 'dapo_grpo',
    label: 'DAPO_GRPO',
    recommended: false,
    why: 'Dynamic filtering on top of GRPO: drops no-signal groups and re-samples; it hurt GRPO in the paper (Finding 5).',
    dimensions: { ...GRPO_DIMS, filtering: 'DAPO, 3 rounds, cold start' },
    overrides: { ...FILTER_ON },
    envOverrides: COLD_START,
  },
  {
    name: 'dapo_gigpo',
    label: 'DAPO_GiGPO',
    recommended: false,
    why: 'Dynamic filtering on top of GiGPO: with a rich turn-level signal filtering helps (best WebShop/Sokoban baseline in the paper).',
    dimensions: { ...GRPO_DIMS, advantage: 'GiGPO, ω 1, γ 0.95', filtering: 'DAPO, 3 rounds, cold start' },
    overrides: { ...GIGPO, ...FILTER_ON },
    envOverrides: { household: COLD_START.household, shop: { ...GIGPO_SHOP, ...COLD_START.shop } },
  },
];

export const PRESET_NAMES: readonly string[] = PRESETS.map((p) => p.name);
export const DEFAULT_PRESET = 'sampo';

export function presetDef(name: string): PresetDef | undefined {
  return PRESETS.find((p) => p.name === name);
}

/** The preset cards: base overrides (env-specific variants are applied by resolveConfig). */
export function listPresets(): PresetInfo[] {
  return PRESETS.map((p) => ({
    name: p.name,
    label: p.label,
    why: p.why,
    recommended: p.recommended,
    dimensions: { ...p.dimensions },
    overrides: { ...p.overrides },
  }));
}
