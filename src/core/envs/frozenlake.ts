/**
 * FrozenLake (gym's toy text world, as RAGEN renders it in text): reach the goal without stepping into a
 * hole. Maps are generated like gym's `generate_random_map` (frozen with probability 0.8, start top-left,
 * goal bottom-right) and kept only when the goal is reachable. Slippery (optional, gym's rule): the intended
 * move happens with probability 1/3, each perpendicular move with 1/3; the slip noise comes from a stream
 * seeded by the task seed, so an episode is still a pure function of (seed, actions).
 *
 * Reward 1 on reaching the goal, else 0 (gym). Falling into a hole ends the episode. Invalid output →
 * "still" (no move), as Sokoban does.
 * Expert: value iteration on the true dynamics (BFS shortest path when not slippery, so 100 % success).
 */
import { Rng, hashSeed } from '../util/rng';
import { BaseEnv, type Transition } from './base';
import { DC, DIRECTIONS, DR, GRID_KEYWORDS, dirIndex, gridPicture, gridText } from './grid';
import { projectKeywords } from './parse';
import { resolveSettings, type SettingSpec } from './settings';
import type { ActionProjection, EnvObservation, ExpertMove, GridPicture } from './types';

export const FROZENLAKE_SETTINGS: Readonly<Record<string, SettingSpec>> = {
  size: { type: 'integer', default: 4, min: 3, max: 8, doc: 'Map side length (gym: 4 or 8; the lab offers 4–6 for demos).' },
  slippery: { type: 'boolean', default: false, doc: 'Gym slip rule: intended move 1/3, each sideways move 1/3. Not always solvable.' },
  frozenProb: { type: 'number', default: 0.8, min: 0.5, max: 1, doc: 'Chance a cell is frozen (not a hole) when generating.' },
  maxSteps: { type: 'integer', default: 15, min: 1, max: 200, doc: 'Horizon in turns.' },
};

export const FROZENLAKE_LEGEND: Record<string, string> = {
  P: 'player',
  _: 'frozen',
  O: 'hole',
  G: 'goal',
  X: 'player in hole',
  '√': 'player on goal',
};

const FROZENLAKE_INTRO =
  'you are walking on a frozen lake . P player , _ frozen , O hole , G goal . reach the goal without falling into a hole .';

export class FrozenLakeEnv extends BaseEnv {
  readonly name = 'frozenlake';
  readonly promptIntro = FROZENLAKE_INTRO;
  readonly settings: Readonly<Record<string, number | boolean>>;
  private readonly n: number;
  private readonly slippery: boolean;
  private hole: Uint8Array = new Uint8Array(0);
  private goal = 0;
  private pos = 0;
  private slipRng = new Rng(0);
  private policy: Int8Array = new Int8Array(0);

  constructor(settings?: Record<string, unknown>) {
    const s = resolveSettings('frozenlake', FROZENLAKE_SETTINGS, settings) as Record<string, number | boolean>;
    super(s.maxSteps as number);
    this.settings = s;
    this.n = s.size as number;
    this.slippery = s.slippery as boolean;
  }

  parse(response: string): ActionProjection {
    return projectKeywords(response, GRID_KEYWORDS, 'still');
  }

  taskId(): string {
    return `frozenlake/${this.n}x${this.n}${this.slippery ? 's' : ''}/${this.seed}`;
  }

  taskType(): string {
    return 'frozenlake';
  }

  protected resetTask(seed: number): void {
    const n = this.n;
    const rng = new Rng(hashSeed('frozenlake', n, this.settings.frozenProb as number, seed));
    for (;;) {
      const hole = new Uint8Array(n * n);
      for (let i = 1; i < n * n - 1; i++) hole[i] = rng.float() < (this.settings.frozenProb as number) ? 0 : 1;
      const dist = bfsDistances(n, hole, n * n - 1);
      if (dist[0] >= 0) {
        this.hole = hole;
        break;
      }
    }
    this.goal = n * n - 1;
    this.pos = 0;
    this.slipRng = new Rng(hashSeed('frozenlake-slip', seed));
    this.policy = this.slippery ? valueIterationPolicy(n, this.hole, this.goal) : shortestPathPolicy(n, this.hole, this.goal);
  }

  private move(pos: number, d: number): number {
    const n = this.n;
    const r = Math.min(n - 1, Math.max(0, Math.floor(pos / n) + DR[d]));
    const c = Math.min(n - 1, Math.max(0, (pos % n) + DC[d]));
    return r * n + c;
  }

  protected apply(p: ActionProjection): Transition {
    let d = dirIndex(p.applied);
    if (d >= 0 && this.slippery) {
      const u = this.slipRng.int(3);
      if (u > 0) d = perpendicular(d)[u - 1];
    }
    if (d >= 0) this.pos = this.move(this.pos, d);
    const won = this.pos === this.goal;
    const lost = this.hole[this.pos] === 1;
    return { reward: won ? 1 : 0, admissible: true, won, lost, score: won ? 1 : 0, applied: p.parsedValid ? p.applied : 'still' };
  }

  private symbols(): string[] {
    const out = new Array<string>(this.n * this.n);
    for (let i = 0; i < out.length; i++) {
      if (i === this.pos) out[i] = this.hole[i] ? 'X' : i === this.goal ? '√' : 'P';
      else out[i] = this.hole[i] ? 'O' : i === this.goal ? 'G' : '_';
    }
    return out;
  }

  protected observe(): EnvObservation {
    return { observation: gridText(this.symbols(), this.n), task: 'reach the goal G .', admissibleActions: DIRECTIONS };
  }

  render(): { text: string; picture: GridPicture | null } {
    const sym = this.symbols();
    return { text: gridText(sym, this.n), picture: gridPicture(sym, this.n, FROZENLAKE_LEGEND) };
  }

  protected expert(): ExpertMove | null {
    const d = this.policy[this.pos];
    if (d < 0) return null;
    const n = this.n;
    const dr = Math.floor(this.goal / n) - Math.floor(this.pos / n);
    const dc = (this.goal % n) - (this.pos % n);
    const where = [dr > 0 ? 'down' : dr < 0 ? 'up' : '', dc > 0 ? 'right' : dc < 0 ? 'left' : ''].filter(Boolean).join(' and ');
    return { think: `the goal is ${where} ; avoid the holes ; go ${DIRECTIONS[d]}`, action: DIRECTIONS[d] };
  }
}

function perpendicular(d: number): [number, number] {
  return d < 2 ? [2, 3] : [0, 1];
}

function neighbours(n: number, pos: number, d: number): number {
  const r = Math.min(n - 1, Math.max(0, Math.floor(pos / n) + DR[d]));
  const c = Math.min(n - 1, Math.max(0, (pos % n) + DC[d]));
  return r * n + c;
}

/** BFS distances to `goal` over non-hole cells (−1 = unreachable). */
function bfsDistances(n: number, hole: Uint8Array, goal: number): Int32Array {
  const dist = new Int32Array(n * n).fill(-1);
  dist[goal] = 0;
  const queue = [goal];
  for (let qi = 0; qi < queue.length; qi++) {
    const p = queue[qi];
    for (let d = 0; d < 4; d++) {
      const q = neighbours(n, p, d);
      if (q === p || hole[q] || dist[q] >= 0) continue;
      dist[q] = dist[p] + 1;
      queue.push(q);
    }
  }
  return dist;
}

/** Deterministic expert on the non-slippery lake: step to a neighbour one move closer (ties: up, down, left, right). */
function shortestPathPolicy(n: number, hole: Uint8Array, goal: number): Int8Array {
  const dist = bfsDistances(n, hole, goal);
  const pol = new Int8Array(n * n).fill(-1);
  for (let p = 0; p < n * n; p++) {
    if (hole[p] || p === goal || dist[p] < 0) continue;
    for (let d = 0; d < 4; d++) {
      const q = neighbours(n, p, d);
      if (q !== p && dist[q] === dist[p] - 1) {
        pol[p] = d;
        break;
      }
    }
  }
  return pol;
}

/** Value iteration (γ = 0.99) on the slippery dynamics; the greedy policy maximises the chance of reaching the goal. */
function valueIterationPolicy(n: number, hole: Uint8Array, goal: number): Int8Array {
  const N = n * n;
  const v = new Float64Array(N);
  const pol = new Int8Array(N).fill(-1);
  const q = (p: number, d: number): number => {
    let s = 0;
    for (const dd of [d, ...perpendicular(d)]) {
      const t = neighbours(n, p, dd);
      s += (t === goal ? 1 : hole[t] ? 0 : 0.99 * v[t]) / 3;
    }
    return s;
  };
  for (let it = 0; it < 500; it++) {
    let delta = 0;
    for (let p = 0; p < N; p++) {
      if (hole[p] || p === goal) continue;
      let best = 0;
      for (let d = 0; d < 4; d++) best = Math.max(best, q(p, d));
      delta = Math.max(delta, Math.abs(best - v[p]));
      v[p] = best;
    }
    if (delta < 1e-10) break;
  }
  for (let p = 0; p < N; p++) {
    if (hole[p] || p === goal) continue;
    let best = -1;
    for (let d = 0; d < 4; d++) {
      const val = q(p, d);
      if (val > best + 1e-12) {
        best = val;
        pol[p] = d;
      }
    }
    if (best <= 0) pol[p] = -1;
  }
  return pol;
}
