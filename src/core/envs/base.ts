/**
 * Shared episode bookkeeping for the testbed envs: horizon, done/won latching, never-throw step, and the
 * EnvStepResult assembly. Each env supplies its parser, its transition (`apply`) and its observation.
 */
import type { ActionProjection, EnvObservation, EnvStepResult, ExpertMove, GridPicture, TestbedEnv } from './types';

export interface Transition {
  readonly reward: number;
  /** The action was admissible / meaningful (before the format check is folded in). */
  readonly admissible: boolean;
  readonly won: boolean;
  /** Episode over without winning (hole, bought the wrong item). */
  readonly lost: boolean;
  readonly score: number;
  /** What the history window records (the projected action, or the passed-through text). */
  readonly applied: string;
}

export abstract class BaseEnv implements TestbedEnv {
  abstract readonly name: string;
  abstract readonly promptIntro: string;
  abstract readonly settings: Readonly<Record<string, number | boolean | string>>;
  readonly maxSteps: number;
  protected seed = 0;
  protected steps = 0;
  protected done = false;
  protected won = false;
  protected lastScore = 0;
  protected obs: EnvObservation = { observation: '', task: '', admissibleActions: [] };
  private started = false;

  constructor(maxSteps: number) {
    this.maxSteps = maxSteps;
  }

  reset(seed: number): EnvObservation {
    const s = Number.isFinite(seed) ? Math.floor(seed) : 0;
    this.seed = s;
    this.steps = 0;
    this.done = false;
    this.won = false;
    this.lastScore = 0;
    this.started = true;
    this.resetTask(s);
    this.obs = this.observe();
    return this.obs;
  }

  step(response: string): EnvStepResult {
    if (!this.started) this.reset(0);
    let proj: ActionProjection;
    try {
      proj = this.parse(response);
    } catch {
      proj = { think: null, action: null, formatValid: false, applied: '', parsedValid: false };
    }
    if (this.done) {
      // Rollouts keep generating for finished envs (spec §3.5); those rows are dropped, the env stays put.
      const o = this.obs;
      return {
        observation: o.observation,
        task: o.task,
        admissibleActions: o.admissibleActions,
        reward: 0,
        done: true,
        won: this.won,
        score: this.lastScore,
        formatValid: proj.formatValid,
        actionValid: false,
        appliedAction: proj.applied,
      };
    }
    const t = this.apply(proj);
    this.steps++;
    if (t.won) this.won = true;
    this.lastScore = t.score;
    this.done = t.won || t.lost || this.steps >= this.maxSteps;
    const o = (this.obs = this.observe());
    return {
      observation: o.observation,
      task: o.task,
      admissibleActions: o.admissibleActions,
      reward: t.reward,
      done: this.done,
      won: this.won,
      score: t.score,
      formatValid: proj.formatValid,
      actionValid: proj.parsedValid && t.admissible,
      appliedAction: t.applied,
    };
  }

  current(): EnvObservation {
    return this.obs;
  }

  anchor(): string {
    return this.obs.observation;
  }

  stepsTaken(): number {
    return this.steps;
  }

  isDone(): boolean {
    return this.done;
  }

  expertMove(): ExpertMove | null {
    if (this.done) return null;
    return this.expert();
  }

  abstract parse(response: string): ActionProjection;
  abstract taskId(): string;
  abstract taskType(): string;
  abstract render(): { text: string; picture: GridPicture | null };
  protected abstract resetTask(seed: number): void;
  protected abstract apply(p: ActionProjection): Transition;
  protected abstract observe(): EnvObservation;
  protected abstract expert(): ExpertMove | null;
}
