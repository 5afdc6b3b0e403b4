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

// ---------------------------------------------------------------------------------------------------------
// Extensions (backwards-compatible): what the testbed's own environments offer beyond TextEnv.
// ---------------------------------------------------------------------------------------------------------

/** A parse result plus the text actually sent to the environment (spec §3.3 pass-through rules). */
export interface ActionProjection extends ParsedResponse {
  /** What the environment receives: the action block's text, or the raw output's last 30 characters. */
  readonly applied: string;
  /** The parser's own validity (paper's v_r before the admissibility check). */
  readonly parsedValid: boolean;
}

/** One expert move: a short rationale and the action, rendered as `<think>…</think><action>…</action>`. */
export interface ExpertMove {
  readonly think: string;
  readonly action: string;
}

/** One (observation, action) pair of the history window (spec §3.4). */
export interface HistoryItem {
  readonly observation: string;
  readonly action: string;
}

/** Every environment of the testbed implements this (TextEnv plus parser, expert and prompt pieces). */
export interface TestbedEnv extends TextEnv {
  /** Settings in effect (defaults filled in). */
  readonly settings: Readonly<Record<string, number | boolean | string>>;
  /** The env's strict parser (spec §2.2 / §3.3). Never throws. */
  parse(response: string): ActionProjection;
  /** The current observation (same as the last reset/step returned). */
  current(): EnvObservation;
  /** The expert's move from the current state, or null when the episode is over (or, slippery, no path). */
  expertMove(): ExpertMove | null;
  /** Stable id of the task the last reset produced, e.g. `sokoban/6x6b1/17`. */
  taskId(): string;
  /** Turns taken so far in this episode. */
  stepsTaken(): number;
  /** Episode finished (won, lost, or horizon reached). */
  isDone(): boolean;
  /** The role / rules line that opens every prompt of this env. */
  readonly promptIntro: string;
  /**
   * The closed set of identifiers this env's pages can show and its actions must copy (the shop's product ids),
   * so the tokenizer can give each one token. Envs without such ids leave it out.
   */
  identifiers?(): readonly string[];
}

/** One turn of a recorded episode (expert or random). */
export interface EpisodeTurn {
  /** Anchor state: the raw observation the action was taken from. */
  readonly observation: string;
  readonly task: string;
  readonly admissibleActions: readonly string[];
  /** The prompt built with the requested history window. */
  readonly prompt: string;
  /** The full response text `<think>…</think><action>…</action>`. */
  readonly response: string;
  readonly action: string;
  readonly reward: number;
  readonly formatValid: boolean;
  readonly actionValid: boolean;
  readonly done: boolean;
  readonly won: boolean;
}

export interface Episode {
  readonly env: string;
  readonly seed: number;
  readonly taskId: string;
  readonly taskType: string;
  readonly turns: EpisodeTurn[];
  readonly won: boolean;
  readonly episodeReturn: number;
  readonly score: number;
}
