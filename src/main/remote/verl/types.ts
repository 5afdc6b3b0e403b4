/**
 * The verl hand-off's two stacks, described as data: where each one starts a run, where its Hydra config lives,
 * and which of the lab's knobs it has a key for. One file per stack (stacks/), one shape here; launch.ts turns a
 * lab config into overrides through this shape only, so a key never moves between stacks by accident.
 */
import type { AdvantageName } from '../../../core/algorithms/advantages/types';
import type { PolicyLossName } from '../../../core/algorithms/losses/types';

/** The environments both stacks run, by their names there (the lab's household / shop / sokoban). */
export const VERL_ENVS = { alfworld: 'household', webshop: 'shop', sokoban: 'sokoban' } as const;
export type VerlEnv = keyof typeof VERL_ENVS;

export type VerlStackName = 'arlarena' | 'verl-agent';

/** Where one environment's run starts and which Hydra config it composes. */
export interface VerlEntry {
  /** The module `python3 -m` runs. */
  readonly module: string;
  /** The Hydra config directory, relative to the checkout's root (Hydra's own search path starts there too). */
  readonly configDir: string;
  /** The primary config's name (without .yaml). */
  readonly configName: string;
  /** The file that shows it (repo-relative, at the stack's commit). */
  readonly source: string;
}

/** A key of the stack's config and the file that defines it. */
export interface StackKey {
  readonly key: string;
  readonly source: string;
}

export interface VerlStackDef {
  readonly name: VerlStackName;
  readonly label: string;
  /** owner/name@commit the key table was read from. */
  readonly repo: string;
  readonly entry: Readonly<Record<VerlEnv, VerlEntry>>;
  /** Where `examples.data_preprocess.prepare --mode text` writes its placeholder prompt files. */
  readonly dataDir: string;
  /** The invalid-action penalty's switch and coefficient. */
  readonly invalidPenalty: { readonly use: StackKey; readonly coef: StackKey };
  /** The policy losses `actor_rollout_ref.actor.policy_loss.loss_mode` takes. */
  readonly lossModes: readonly PolicyLossName[];
  /** Sequence masking (GRPO_SM), when the stack has it. */
  readonly seqMask?: { readonly use: StackKey; readonly delta: StackKey };
  /** SAPO's two temperatures, when the stack has SAPO. */
  readonly sapoTau?: { readonly pos: StackKey; readonly neg: StackKey };
  /** The switch without which the KL loss is only logged, when the stack has one. */
  readonly klLossUpdate?: StackKey;
  /** Filtering's plain-rollout cold start, when the stack has one. */
  readonly coldStart?: StackKey;
  /** The stack's `algorithm.adv_estimator` for a lab estimator (null: the stack has none). */
  readonly estimator: (lab: AdvantageName, crossSteps: boolean) => string | null;
  /** The estimators the stack has, for the error that names them. */
  readonly estimatorNames: readonly string[];
  /**
   * Keys the stack's code reads but one environment's config file lacks: the launch writes them with Hydra's
   * `++` (add or override), which that config accepts where a plain override is refused.
   */
  readonly addedKeys: Partial<Readonly<Record<VerlEnv, readonly string[]>>>;
  /** Known behaviours of the stack's code that change what a launch does, per env (printed with the launch). */
  readonly caveats: (env: VerlEnv, coldStartSteps: number, filterOn: boolean) => readonly string[];
}
