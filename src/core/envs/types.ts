/**
 * The contract every testbed environment implements (spec §3). Environments are pure, seeded and
 * synchronous so thousands of them can be stepped in lockstep inside a worker.
 *
 * Flow per turn: the rollout builds the prompt from `EnvObservation` (+ history), the policy writes text, the
 * env's parser (`parseResponse`, spec §3.3) extracts the action, and `step(response)` applies it. Invalid
 * output never throws: it takes the environment's invalid path ("still" for Sokoban, "Nothing happens" for
 * the household) and reports `formatValid` / `actionValid` = false. The invalid-action penalty λ belongs to
 * the trainer, not here.
 */

/** A small picture for grid worlds: rows of cell symbols plus a legend symbol → meaning. */
export interface GridPicture {
  readonly kind: 'grid';
  readonly cells: string[][];
  readonly legend: Record<string, string>;
}

export interface EnvObservation {
  /** The raw observation text the policy sees this turn (no template, no history). Also the GiGPO anchor state. */
  readonly observation: string;
  /** The task statement, re-injected into every prompt. */
  readonly task: string;
  /** Admissible actions where the paper's environment lists them (empty list = free-form / not listed). */
  readonly admissibleActions: readonly string[];
}

export interface EnvStepResult extends EnvObservation {
  /** Environment reward ρ for this step (spec §3.1). */
  readonly reward: number;
  readonly done: boolean;
  readonly won: boolean;
  /** Task score in [0, 1] (WebShop-style score for shop; 1 on success elsewhere). */
  readonly score: number;
  /** The response matched the strict format (spec §2.2). */
  readonly formatValid: boolean;
  /** v_r: format valid AND the action admissible / meaningful. */
  readonly actionValid: boolean;
  /** The action string that was applied (after projection), for the history window. */
  readonly appliedAction: string;
}

export interface ParsedResponse {
  readonly think: string | null;
  /** The extracted action text (trimmed, lower-cased where the env says so), or null when none could be found. */
  readonly action: string | null;
  readonly formatValid: boolean;
}

export interface TextEnv {
  readonly name: string;
  /** Deterministic task for a seed. */
  reset(seed: number): EnvObservation;
  /** Apply the model's raw response text. Never throws on any input. */
  step(response: string): EnvStepResult;
  /** Current anchor state: the raw observation before acting. */
  anchor(): string;
  /** Text render for the UI, and a picture for grid worlds (null otherwise). */
  render(): { text: string; picture: GridPicture | null };
  /** Task type for per-type validation metrics (e.g. `pick_and_place`), or the env name. */
  taskType(): string;
  /** Horizon (max turns) in effect. */
  readonly maxSteps: number;
}
