/**
 * Sokoban (spec §3.1): gym-sokoban's generation and rewards in a text grid.
 *
 * Generation, as gym-sokoban does it: carve a room topology by a random walk of small floor patterns, put
 * the targets and the player on floor cells with every box already on its target (the solved state), then
 * play *backwards* (the player pulls boxes) for `searchDepth` moves and keep the most scrambled state seen.
 * Every state reached by reverse play is solvable by construction; a forward BFS then measures the optimal
 * solution, and the puzzle is kept only when it needs between `minSolution` and `maxSolution` moves
 * (calibration.md: 3–12 for the laptop setting).
 *
 * Rewards (gym-sokoban defaults): −0.1 a step, +1 box onto a target, −1 box off a target, +10 when every box
 * is on a target. Invalid output executes "still" (no move, still −0.1) (spec §3.3).
 */
import { Rng, hashSeed } from '../util/rng';
import { BaseEnv, type Transition } from './base';
import { DC, DIRECTIONS, DR, GRID_KEYWORDS, dirIndex, gridPicture, gridText } from './grid';
import { projectKeywords } from './parse';
import { resolveSettings, type SettingSpec } from './settings';
import type { ActionProjection, EnvObservation, ExpertMove, GridPicture } from './types';

export const SOKOBAN_SETTINGS: Readonly<Record<string, SettingSpec>> = {
  size: { type: 'integer', default: 6, min: 5, max: 10, doc: 'Room side length in cells, walls included (paper: 6).' },
  boxes: { type: 'integer', default: 1, min: 1, max: 3, doc: 'Number of boxes (= targets) (paper: 1).' },
  maxSteps: { type: 'integer', default: 15, min: 1, max: 200, doc: 'Horizon in turns (paper config 50, its only script 15).' },
  minSolution: { type: 'integer', default: 3, min: 1, max: 60, doc: 'Keep puzzles whose optimal solution has at least this many moves.' },
  maxSolution: { type: 'integer', default: 12, min: 1, max: 60, doc: 'Keep puzzles whose optimal solution has at most this many moves.' },
  searchDepth: { type: 'integer', default: 30, min: 5, max: 300, doc: 'Reverse-play moves when generating (paper config: 30).' },
};

export const SOKOBAN_LEGEND: Record<string, string> = {
  '#': 'wall',
  _: 'floor',
  O: 'target',
  X: 'box',
  P: 'player',
  '√': 'box on target',
  S: 'player on target',
};

const SOKOBAN_INTRO =
  'you are solving a sokoban puzzle . # wall , _ floor , O target , X box , P player , √ box on target , S player on target .';

const BFS_NODE_CAP = 200_000;

interface Puzzle {
  wall: Uint8Array;
  target: Uint8Array;
  boxes: number[];
  player: number;
  solution: number[];
}

export class SokobanEnv extends BaseEnv {
  readonly name = 'sokoban';
  readonly promptIntro = SOKOBAN_INTRO;
  readonly settings: Readonly<Record<string, number>>;
  private readonly size: number;
  private readonly nBoxes: number;
  private wall: Uint8Array = new Uint8Array(0);
  private target: Uint8Array = new Uint8Array(0);
  private box: Uint8Array = new Uint8Array(0);
  private player = 0;
  private planKeyToDir = new Map<string, number>();
  private variant: string;

  constructor(settings?: Record<string, unknown>) {
    const s = resolveSettings('sokoban', SOKOBAN_SETTINGS, settings) as Record<string, number>;
    if (s.minSolution > s.maxSolution) {
      throw new Error(
        `sokoban.settings.minSolution = ${s.minSolution} exceeds maxSolution = ${s.maxSolution}: lower minSolution or raise maxSolution`,
      );
    }
    super(s.maxSteps);
    this.settings = s;
    this.size = s.size;
    this.nBoxes = s.boxes;
    this.variant = `${s.size}x${s.size}b${s.boxes}`;
  }

  parse(response: string): ActionProjection {
    return projectKeywords(response, GRID_KEYWORDS, 'still');
  }

  taskId(): string {
    return `sokoban/${this.variant}/${this.seed}`;
  }

  taskType(): string {
    return 'sokoban';
  }

  protected resetTask(seed: number): void {
    const p = generatePuzzle(this.size, this.nBoxes, this.settings as Record<string, number>, seed);
    this.wall = p.wall;
    this.target = p.target;
    this.box = new Uint8Array(this.size * this.size);
    for (const b of p.boxes) this.box[b] = 1;
    this.player = p.player;
    this.planKeyToDir = planMap(this.size, p.player, p.boxes, p.solution);
  }

  protected apply(p: ActionProjection): Transition {
    const d = dirIndex(p.applied);
    let reward = -0.1;
    if (d >= 0) {
      const n = this.size;
      const r = Math.floor(this.player / n) + DR[d];
      const c = (this.player % n) + DC[d];
      const next = r * n + c;
      if (!this.wall[next]) {
        if (this.box[next]) {
          const beyond = next + DR[d] * n + DC[d];
          if (!this.wall[beyond] && !this.box[beyond]) {
            this.box[next] = 0;
            this.box[beyond] = 1;
            this.player = next;
            if (this.target[next]) reward -= 1;
            if (this.target[beyond]) reward += 1;
          }
        } else {
          this.player = next;
        }
      }
    }
    const solved = this.solved();
    if (solved) reward += 10;
    return { reward, admissible: true, won: solved, lost: false, score: solved ? 1 : 0, applied: p.parsedValid ? p.applied : 'still' };
  }

  private solved(): boolean {
    for (let i = 0; i < this.box.length; i++) if (this.box[i] && !this.target[i]) return false;
    return true;
  }

  private symbols(): string[] {
    const out = new Array<string>(this.box.length);
    for (let i = 0; i < out.length; i++) {
      if (this.wall[i]) out[i] = '#';
      else if (i === this.player) out[i] = this.target[i] ? 'S' : 'P';
      else if (this.box[i]) out[i] = this.target[i] ? '√' : 'X';
      else out[i] = this.target[i] ? 'O' : '_';
    }
    return out;
  }

  protected observe(): EnvObservation {
    return { observation: gridText(this.symbols(), this.size), task: 'push every box onto a target .', admissibleActions: DIRECTIONS };
  }

  render(): { text: string; picture: GridPicture | null } {
    const sym = this.symbols();
    return { text: gridText(sym, this.size), picture: gridPicture(sym, this.size, SOKOBAN_LEGEND) };
  }

  private boxList(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.box.length; i++) if (this.box[i]) out.push(i);
    return out;
  }

  protected expert(): ExpertMove | null {
    const boxes = this.boxList();
    let d = this.planKeyToDir.get(stateKey(this.player, boxes));
    if (d === undefined) {
      const sol = solve(this.size, this.wall, this.target, this.player, boxes);
      if (sol === null || sol.length === 0) return null;
      this.planKeyToDir = planMap(this.size, this.player, boxes, sol);
      d = sol[0];
    }
    return { think: this.rationale(d), action: DIRECTIONS[d] };
  }

  private rationale(d: number): string {
    const n = this.size;
    const next = this.player + DR[d] * n + DC[d];
    const dir = DIRECTIONS[d];
    if (this.box[next]) {
      const beyond = next + DR[d] * n + DC[d];
      if (this.target[beyond]) return `box is next to target ; push ${dir}`;
      return `box is ${this.relation(next)} target ; push ${dir}`;
    }
    const b = this.nearestOffTargetBox();
    return b < 0 ? `walk ${dir}` : `box is ${this.relation(b)} target ; walk ${dir} to get behind it`;
  }

  /** Where a box cell lies relative to its nearest free target, e.g. "above and left of". */
  private relation(cell: number): string {
    const n = this.size;
    let best = -1;
    let bestD = Infinity;
    for (let i = 0; i < this.target.length; i++) {
      if (!this.target[i] || (this.box[i] && i !== cell)) continue;
      const dist = Math.abs(Math.floor(i / n) - Math.floor(cell / n)) + Math.abs((i % n) - (cell % n));
      if (dist < bestD) {
        bestD = dist;
        best = i;
      }
    }
    if (best < 0) return 'away from the';
    const dr = Math.floor(cell / n) - Math.floor(best / n);
    const dc = (cell % n) - (best % n);
    const v = dr < 0 ? 'above' : dr > 0 ? 'below' : '';
    const h = dc < 0 ? 'left of' : dc > 0 ? 'right of' : '';
    if (v && h) return `${v} and ${h}`;
    return v || h || 'on the';
  }

  private nearestOffTargetBox(): number {
    const n = this.size;
    const pr = Math.floor(this.player / n);
    const pc = this.player % n;
    let best = -1;
    let bestD = Infinity;
    for (let i = 0; i < this.box.length; i++) {
      if (!this.box[i] || this.target[i]) continue;
      const dist = Math.abs(Math.floor(i / n) - pr) + Math.abs((i % n) - pc);
      if (dist < bestD) {
        bestD = dist;
        best = i;
      }
    }
    return best;
  }
}

function stateKey(player: number, boxes: readonly number[]): string {
  return `${player}|${boxes.join(',')}`;
}

/** Map each state along a solution to the move taken there, so the expert follows its plan without re-searching. */
function planMap(n: number, player: number, boxes: readonly number[], sol: readonly number[]): Map<string, number> {
  const map = new Map<string, number>();
  let p = player;
  let b = boxes.slice();
  for (const d of sol) {
    map.set(stateKey(p, b), d);
    const next = p + DR[d] * n + DC[d];
    const bi = b.indexOf(next);
    if (bi >= 0) {
      b[bi] = next + DR[d] * n + DC[d];
      b = b.slice().sort((x, y) => x - y);
    }
    p = next;
  }
  return map;
}

/**
 * Forward BFS over (player, boxes) with push moves; returns the optimal move list, or null when unsolvable
 * (or the search exceeds BFS_NODE_CAP states, possible only with several boxes in big rooms).
 */
export function solve(n: number, wall: Uint8Array, target: Uint8Array, player: number, boxes: readonly number[]): number[] | null {
  const start = boxes.slice().sort((x, y) => x - y);
  const isGoal = (b: readonly number[]) => b.every((x) => target[x] === 1);
  if (isGoal(start)) return [];
  const parent = new Map<string, { prev: string; d: number }>();
  const startKey = stateKey(player, start);
  parent.set(startKey, { prev: '', d: -1 });
  let frontier: Array<{ p: number; b: number[]; key: string }> = [{ p: player, b: start, key: startKey }];
  while (frontier.length > 0) {
    const nextFrontier: Array<{ p: number; b: number[]; key: string }> = [];
    for (const s of frontier) {
      for (let d = 0; d < 4; d++) {
        const next = s.p + DR[d] * n + DC[d];
        if (wall[next]) continue;
        let b = s.b;
        const bi = b.indexOf(next);
        if (bi >= 0) {
          const beyond = next + DR[d] * n + DC[d];
          if (wall[beyond] || b.includes(beyond)) continue;
          b = b.slice();
          b[bi] = beyond;
          b.sort((x, y) => x - y);
        }
        const key = stateKey(next, b);
        if (parent.has(key)) continue;
        parent.set(key, { prev: s.key, d });
        if (bi >= 0 && isGoal(b)) {
          const path: number[] = [];
          let k = key;
          for (;;) {
            const e = parent.get(k) as { prev: string; d: number };
            if (e.d < 0) break;
            path.push(e.d);
            k = e.prev;
          }
          return path.reverse();
        }
        if (parent.size > BFS_NODE_CAP) return null;
        nextFrontier.push({ p: next, b, key });
      }
    }
    frontier = nextFrontier;
  }
  return null;
}

// Floor patterns stamped by the topology walk (3×3, centre = walker position): corridors and small rooms.
const PATTERNS: ReadonlyArray<ReadonlyArray<number>> = [
  [0, 0, 0, 1, 1, 1, 0, 0, 0],
  [0, 1, 0, 0, 1, 0, 0, 1, 0],
  [0, 0, 0, 1, 1, 0, 0, 1, 0],
  [0, 0, 0, 1, 1, 0, 1, 1, 0],
  [0, 0, 0, 0, 1, 1, 0, 1, 0],
];

function carveTopology(n: number, rng: Rng): Uint8Array {
  const wall = new Uint8Array(n * n).fill(1);
  const steps = Math.floor(1.7 * (n + n));
  let r = rng.range(1, n - 2);
  let c = rng.range(1, n - 2);
  let d = rng.int(4);
  for (let i = 0; i < steps; i++) {
    if (rng.float() < 0.35) d = rng.int(4);
    r = Math.min(n - 2, Math.max(1, r + DR[d]));
    c = Math.min(n - 2, Math.max(1, c + DC[d]));
    const pat = PATTERNS[rng.int(PATTERNS.length)];
    for (let k = 0; k < 9; k++) {
      if (!pat[k]) continue;
      const rr = r + Math.floor(k / 3) - 1;
      const cc = c + (k % 3) - 1;
      if (rr >= 1 && rr <= n - 2 && cc >= 1 && cc <= n - 2) wall[rr * n + cc] = 0;
    }
  }
  return wall;
}

/** Reverse play from the solved state; returns the most scrambled state (gym-sokoban's score: swaps × displacement). */
function reversePlay(
  n: number,
  wall: Uint8Array,
  targets: number[],
  player: number,
  depth: number,
  rng: Rng,
): { boxes: number[]; player: number } | null {
  const boxes = targets.slice();
  let p = player;
  let pulls = 0;
  let best: { boxes: number[]; player: number; score: number } | null = null;
  for (let i = 0; i < depth; i++) {
    const d = rng.int(4);
    const next = p + DR[d] * n + DC[d];
    if (wall[next] || boxes.includes(next)) continue;
    const behind = p - DR[d] * n - DC[d];
    const bi = boxes.indexOf(behind);
    if (bi >= 0 && rng.float() < 0.8) {
      boxes[bi] = p;
      pulls++;
    }
    p = next;
    if (pulls === 0) continue;
    let disp = 0;
    let off = 0;
    for (let j = 0; j < boxes.length; j++) {
      const t = targets[j];
      disp += Math.abs(Math.floor(boxes[j] / n) - Math.floor(t / n)) + Math.abs((boxes[j] % n) - (t % n));
      if (!targets.includes(boxes[j])) off++;
    }
    if (off === 0) continue;
    const score = pulls * disp;
    if (best === null || score > best.score) best = { boxes: boxes.slice(), player: p, score };
  }
  return best;
}

/** Deterministic puzzle for (settings, seed). */
export function generatePuzzle(n: number, nBoxes: number, s: Record<string, number>, seed: number): Puzzle {
  const rng = new Rng(hashSeed('sokoban', n, nBoxes, s.searchDepth, s.minSolution, s.maxSolution, seed));
  let fallback: Puzzle | null = null;
  for (let attempt = 0; attempt < 400; attempt++) {
    const wall = carveTopology(n, rng);
    const floor: number[] = [];
    for (let i = 0; i < wall.length; i++) if (!wall[i]) floor.push(i);
    if (floor.length < nBoxes + 2) continue;
    rng.shuffle(floor);
    const targets = floor.slice(0, nBoxes);
    const player = floor[nBoxes];
    const target = new Uint8Array(n * n);
    for (const t of targets) target[t] = 1;
    for (let tries = 0; tries < 4; tries++) {
      const st = reversePlay(n, wall, targets, player, s.searchDepth, rng);
      if (st === null) continue;
      const sol = solve(n, wall, target, st.player, st.boxes);
      if (sol === null || sol.length === 0) continue;
      const puzzle = { wall, target, boxes: st.boxes.slice().sort((a, b) => a - b), player: st.player, solution: sol };
      if (sol.length >= s.minSolution && sol.length <= s.maxSolution) return puzzle;
      if (fallback === null || Math.abs(sol.length - s.minSolution) < Math.abs(fallback.solution.length - s.minSolution)) fallback = puzzle;
    }
  }
  // Unreachable with sane settings; keep the env total (never throw on reset) with the closest solvable puzzle.
  if (fallback !== null) return fallback;
  throw new Error(`sokoban: could not generate a puzzle for size ${n}, boxes ${nBoxes}; use fewer boxes or a larger size`);
}
