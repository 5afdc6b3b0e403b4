/**
 * Household (ALFWorld-style, spec §3.1): one room of receptacles — some openable, with contents — and
 * objects; the six ALFWorld task types; ALFWorld's command language and observation phrasing (lower-cased,
 * punctuation spaced for a word tokenizer); reward 10 on success; horizon 50. A command that is not in the
 * admissible list is passed through and answered "nothing happens ." (spec §3.3).
 *
 * Scenes: a task seed picks the task type, a compatible room type and a *layout* (which receptacles the
 * room has); objects are then placed at random, some inside closed receptacles. Layouts 0–11 of each room
 * type serve training and in-distribution held-out seeds; layouts 12–15 appear only for out-of-distribution
 * held-out seeds (src/core/envs/splits.ts), like ALFWorld's unseen scenes.
 *
 * Expert: a planner that only uses what the agent has observed (contents are revealed by arriving at or
 * opening a receptacle). It explores receptacles in list order, takes a target object as soon as it is
 * seen, cleans / heats / cools it at the sink / microwave / fridge, and puts it in the goal receptacle
 * (or turns on the lamp for "look at … under the desklamp").
 */
import { Rng, hashSeed } from '../util/rng';
import { BaseEnv, type Transition } from './base';
import { projectStrict } from './parse';
import { resolveSettings, type SettingSpec } from './settings';
import { isOutOfDistributionSeed } from './splits';
import type { ActionProjection, EnvObservation, ExpertMove, GridPicture } from './types';

export const HOUSEHOLD_TASK_TYPES = [
  'pick_and_place_simple',
  'look_at_obj_in_light',
  'pick_clean_then_place_in_recep',
  'pick_heat_then_place_in_recep',
  'pick_cool_then_place_in_recep',
  'pick_two_obj_and_place',
] as const;
export type HouseholdTaskType = (typeof HOUSEHOLD_TASK_TYPES)[number];

export const HOUSEHOLD_SETTINGS: Readonly<Record<string, SettingSpec>> = {
  maxSteps: { type: 'integer', default: 50, min: 5, max: 200, doc: 'Horizon in turns (ALFWorld: 50).' },
  receptacles: {
    type: 'integer',
    default: 10,
    min: 6,
    max: 20,
    doc: 'Receptacles per room (ALFWorld rooms have ~10–40; fewer keeps prompts short).',
  },
  objects: { type: 'integer', default: 6, min: 2, max: 20, doc: 'Distractor objects placed besides the task objects.' },
  taskType: {
    type: 'enum',
    default: 'all',
    choices: ['all', ...HOUSEHOLD_TASK_TYPES],
    doc: 'Restrict tasks to one ALFWorld task type (all = uniform over the six).',
  },
};

type Room = 'kitchen' | 'livingroom' | 'bedroom' | 'bathroom';
const ROOMS: readonly Room[] = ['kitchen', 'livingroom', 'bedroom', 'bathroom'];
export const LAYOUTS_PER_ROOM = 16;
export const OOD_LAYOUT_START = 12;

interface RecepKind {
  readonly openable: boolean;
  /** Max instances in a room. */
  readonly multi: number;
}
const RECEP: Record<string, RecepKind> = {
  armchair: { openable: false, multi: 1 },
  bathtubbasin: { openable: false, multi: 1 },
  bed: { openable: false, multi: 1 },
  cabinet: { openable: true, multi: 3 },
  coffeemachine: { openable: false, multi: 1 },
  coffeetable: { openable: false, multi: 1 },
  countertop: { openable: false, multi: 2 },
  desk: { openable: false, multi: 1 },
  diningtable: { openable: false, multi: 1 },
  drawer: { openable: true, multi: 3 },
  dresser: { openable: false, multi: 1 },
  fridge: { openable: true, multi: 1 },
  garbagecan: { openable: false, multi: 1 },
  handtowelholder: { openable: false, multi: 1 },
  laundryhamper: { openable: false, multi: 1 },
  microwave: { openable: true, multi: 1 },
  safe: { openable: true, multi: 1 },
  shelf: { openable: false, multi: 2 },
  sidetable: { openable: false, multi: 2 },
  sinkbasin: { openable: false, multi: 1 },
  sofa: { openable: false, multi: 1 },
  stoveburner: { openable: false, multi: 2 },
  toaster: { openable: false, multi: 1 },
  toilet: { openable: false, multi: 1 },
  towelholder: { openable: false, multi: 1 },
  tvstand: { openable: false, multi: 1 },
};

const ROOM_RECEPS: Record<Room, { mandatory: string[]; optional: string[]; lampOn: string[] }> = {
  kitchen: {
    mandatory: ['countertop', 'fridge', 'microwave', 'sinkbasin', 'cabinet'],
    optional: ['drawer', 'diningtable', 'shelf', 'stoveburner', 'coffeemachine', 'toaster', 'garbagecan'],
    lampOn: [],
  },
  livingroom: {
    mandatory: ['sofa', 'coffeetable', 'sidetable'],
    optional: ['armchair', 'drawer', 'cabinet', 'shelf', 'tvstand', 'dresser', 'garbagecan'],
    lampOn: ['sidetable'],
  },
  bedroom: {
    mandatory: ['bed', 'desk', 'sidetable'],
    optional: ['drawer', 'dresser', 'shelf', 'safe', 'garbagecan', 'laundryhamper', 'armchair'],
    lampOn: ['desk', 'sidetable'],
  },
  bathroom: {
    mandatory: ['countertop', 'sinkbasin', 'cabinet', 'toilet'],
    optional: ['drawer', 'bathtubbasin', 'towelholder', 'handtowelholder', 'garbagecan', 'shelf'],
    lampOn: [],
  },
};

// Object types per room; capability letters: c = cleanable, h = heatable, k = coolable.
const ROOM_OBJECTS: Record<Room, Record<string, string>> = {
  kitchen: {
    apple: 'chk',
    tomato: 'chk',
    potato: 'chk',
    egg: 'hk',
    lettuce: 'ck',
    bread: 'hk',
    mug: 'chk',
    cup: 'chk',
    plate: 'chk',
    bowl: 'chk',
    pan: 'ck',
    pot: 'ck',
    knife: 'c',
    fork: 'c',
    spoon: 'c',
    spatula: 'c',
    dishsponge: 'c',
    saltshaker: '',
    peppershaker: '',
    winebottle: 'k',
    kettle: 'c',
  },
  livingroom: {
    book: '',
    pillow: '',
    remotecontrol: '',
    keychain: '',
    creditcard: '',
    newspaper: '',
    vase: '',
    statue: '',
    box: '',
    watch: '',
    laptop: '',
    cellphone: '',
  },
  bedroom: {
    book: '',
    pillow: '',
    cellphone: '',
    alarmclock: '',
    cd: '',
    pen: '',
    pencil: '',
    keychain: '',
    creditcard: '',
    laptop: '',
    mug: 'c',
    bowl: 'c',
  },
  bathroom: {
    soapbar: 'c',
    soapbottle: '',
    toiletpaper: '',
    spraybottle: '',
    candle: '',
    towel: '',
    handtowel: '',
    cloth: 'c',
    tissuebox: '',
    plunger: '',
    scrubbrush: '',
  },
};

const TASK_ROOMS: Record<HouseholdTaskType, readonly Room[]> = {
  pick_and_place_simple: ROOMS,
  look_at_obj_in_light: ['livingroom', 'bedroom'],
  pick_clean_then_place_in_recep: ['kitchen', 'bathroom'],
  pick_heat_then_place_in_recep: ['kitchen'],
  pick_cool_then_place_in_recep: ['kitchen'],
  pick_two_obj_and_place: ROOMS,
};

const TASK_CAP: Record<HouseholdTaskType, string> = {
  pick_and_place_simple: '',
  look_at_obj_in_light: '',
  pick_clean_then_place_in_recep: 'c',
  pick_heat_then_place_in_recep: 'h',
  pick_cool_then_place_in_recep: 'k',
  pick_two_obj_and_place: '',
};

/** The appliance a task needs (its receptacle type), excluded as the goal receptacle. */
const TASK_TOOL: Partial<Record<HouseholdTaskType, string>> = {
  pick_clean_then_place_in_recep: 'sinkbasin',
  pick_heat_then_place_in_recep: 'microwave',
  pick_cool_then_place_in_recep: 'fridge',
};

interface Recep {
  readonly name: string;
  readonly type: string;
  readonly openable: boolean;
  open: boolean;
  contents: number[];
  /** The agent has seen its contents (arrived while open / not openable, or opened it). */
  revealed: boolean;
}

interface Obj {
  readonly name: string;
  readonly type: string;
  /** Receptacle index, or −1 when carried. */
  loc: number;
  clean: boolean;
  hot: boolean;
  cool: boolean;
  readonly lamp: boolean;
  on: boolean;
}

const INTRO = 'you are an expert agent in a household . you move between receptacles and use objects to finish the task .';

function listPhrase(names: string[]): string {
  if (names.length === 0) return 'nothing';
  if (names.length === 1) return `a ${names[0]}`;
  return `${names
    .slice(0, -1)
    .map((n) => `a ${n}`)
    .join(' , ')} , and a ${names[names.length - 1]}`;
}

export class HouseholdEnv extends BaseEnv {
  readonly name = 'household';
  readonly promptIntro = INTRO;
  readonly settings: Readonly<Record<string, number | string>>;
  private receps: Recep[] = [];
  private objs: Obj[] = [];
  private at = -1;
  private holding = -1;
  private task: HouseholdTaskType = 'pick_and_place_simple';
  private targetType = '';
  private goalType = '';
  private taskText = '';
  private room: Room = 'kitchen';
  private layoutId = 0;
  private lastText = '';
  private admissible: string[] = [];
  private admissibleSet = new Set<string>();

  constructor(settings?: Record<string, unknown>) {
    const s = resolveSettings('household', HOUSEHOLD_SETTINGS, settings) as Record<string, number | string>;
    super(s.maxSteps as number);
    this.settings = s;
  }

  parse(response: string): ActionProjection {
    return projectStrict(response);
  }

  taskId(): string {
    return `household/${this.room}-${this.layoutId}/${this.task}/${this.seed}`;
  }

  taskType(): string {
    return this.task;
  }

  /** Room type and layout id of the current task (layouts ≥ OOD_LAYOUT_START are out-of-distribution). */
  layout(): { room: string; layoutId: number } {
    return { room: this.room, layoutId: this.layoutId };
  }

  protected resetTask(seed: number): void {
    const rng = new Rng(hashSeed('household', seed));
    const chosen = this.settings.taskType as string;
    this.task = chosen === 'all' ? rng.pick(HOUSEHOLD_TASK_TYPES) : (chosen as HouseholdTaskType);
    this.room = rng.pick(TASK_ROOMS[this.task]);
    this.layoutId = isOutOfDistributionSeed(seed)
      ? OOD_LAYOUT_START + rng.int(LAYOUTS_PER_ROOM - OOD_LAYOUT_START)
      : rng.int(OOD_LAYOUT_START);
    this.receps = buildLayout(this.room, this.layoutId, this.settings.receptacles as number);
    this.objs = [];
    this.at = -1;
    this.holding = -1;

    // The task: target object type with the needed capability, and a goal receptacle type.
    const pool = ROOM_OBJECTS[this.room];
    const cap = TASK_CAP[this.task];
    const candidates = Object.keys(pool).filter((t) => cap === '' || pool[t].includes(cap));
    this.targetType = rng.pick(candidates);
    const tool = TASK_TOOL[this.task];
    const goalTypes = [...new Set(this.receps.map((r) => r.type))].filter((t) => t !== tool);
    this.goalType = this.task === 'look_at_obj_in_light' ? 'desklamp' : rng.pick(goalTypes);

    const placeable = this.receps.map((_, i) => i).filter((i) => this.receps[i].type !== this.goalType);
    const counts = new Map<string, number>();
    const addObj = (type: string, where: number, lamp = false) => {
      const n = (counts.get(type) ?? 0) + 1;
      counts.set(type, n);
      this.objs.push({ name: `${type} ${n}`, type, loc: where, clean: false, hot: false, cool: false, lamp, on: false });
      this.receps[where].contents.push(this.objs.length - 1);
    };
    if (this.task === 'look_at_obj_in_light') {
      const lampSpots = this.receps.map((r, i) => (ROOM_RECEPS[this.room].lampOn.includes(r.type) ? i : -1)).filter((i) => i >= 0);
      addObj('desklamp', rng.pick(lampSpots), true);
    }
    const nTargets = (this.task === 'pick_two_obj_and_place' ? 2 : 1) + (rng.float() < 0.3 ? 1 : 0);
    for (let i = 0; i < nTargets; i++) addObj(this.targetType, rng.pick(placeable));
    const others = Object.keys(pool).filter((t) => t !== this.targetType);
    for (let i = 0; i < (this.settings.objects as number); i++) addObj(rng.pick(others), rng.int(this.receps.length));
    // Names must be listed in a stable order inside each receptacle.
    for (const r of this.receps) r.contents.sort((a, b) => a - b);

    this.taskText = taskSentence(this.task, this.targetType, this.goalType);
    this.lastText = `you are in the middle of a room . looking quickly around you , you see ${listPhrase(this.receps.map((r) => r.name))} .`;
  }

  // ---------------------------------------------------------------------------------------------- actions

  private computeAdmissible(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.receps.length; i++) if (i !== this.at) out.push(`go to ${this.receps[i].name}`);
    if (this.at >= 0) {
      const r = this.receps[this.at];
      if (r.openable) out.push(r.open ? `close ${r.name}` : `open ${r.name}`);
      const reachable = !r.openable || r.open;
      if (reachable && this.holding < 0) {
        for (const o of r.contents) if (!this.objs[o].lamp) out.push(`take ${this.objs[o].name} from ${r.name}`);
      }
      if (this.holding >= 0) {
        const h = this.objs[this.holding].name;
        if (reachable) out.push(`put ${h} in/on ${r.name}`);
        if (r.type === 'sinkbasin') out.push(`clean ${h} with ${r.name}`);
        if (r.type === 'microwave') out.push(`heat ${h} with ${r.name}`);
        if (r.type === 'fridge') out.push(`cool ${h} with ${r.name}`);
      }
      for (const o of r.contents) if (this.objs[o].lamp) out.push(`use ${this.objs[o].name}`);
      out.push(`examine ${r.name}`);
    }
    if (this.holding >= 0) out.push(`examine ${this.objs[this.holding].name}`);
    out.push('inventory', 'look');
    return out;
  }

  private contentsText(r: Recep): string {
    return listPhrase(r.contents.map((o) => this.objs[o].name));
  }

  private reveal(r: Recep): string {
    r.revealed = true;
    return r.openable ? `in it , you see ${this.contentsText(r)} .` : `on the ${r.name} , you see ${this.contentsText(r)} .`;
  }

  protected apply(p: ActionProjection): Transition {
    const cmd = p.applied;
    let text = 'nothing happens .';
    const admissible = this.admissibleSet.has(cmd);
    if (admissible) text = this.execute(cmd);
    this.lastText = text;
    const won = this.checkWon();
    return { reward: won ? 10 : 0, admissible, won, lost: false, score: won ? 1 : 0, applied: cmd };
  }

  /** Run an admissible command (all preconditions were checked when the list was built). */
  private execute(cmd: string): string {
    const r = this.at >= 0 ? this.receps[this.at] : null;
    if (cmd.startsWith('go to ')) {
      const i = this.receps.findIndex((x) => x.name === cmd.slice(6));
      this.at = i;
      const t = this.receps[i];
      if (t.openable && !t.open) return `you arrive at ${t.name} . the ${t.name} is closed .`;
      if (t.openable) return `you arrive at ${t.name} . the ${t.name} is open . ${this.reveal(t)}`;
      return `you arrive at ${t.name} . ${this.reveal(t)}`;
    }
    if (r === null) {
      if (cmd === 'look') return this.lastLookMiddle();
      if (cmd.startsWith('examine ')) return this.examineHeld();
      return this.inventoryText();
    }
    if (cmd === `open ${r.name}`) {
      r.open = true;
      return `you open the ${r.name} . the ${r.name} is open . ${this.reveal(r)}`;
    }
    if (cmd === `close ${r.name}`) {
      r.open = false;
      return `you close the ${r.name} .`;
    }
    if (cmd.startsWith('take ')) {
      const name = cmd.slice(5, cmd.length - r.name.length - 6);
      const o = r.contents.find((x) => this.objs[x].name === name) as number;
      r.contents = r.contents.filter((x) => x !== o);
      this.objs[o].loc = -1;
      this.holding = o;
      return `you pick up the ${name} from the ${r.name} .`;
    }
    if (cmd.startsWith('put ')) {
      const o = this.holding;
      this.objs[o].loc = this.at;
      r.contents.push(o);
      r.contents.sort((a, b) => a - b);
      this.holding = -1;
      return `you put the ${this.objs[o].name} in/on the ${r.name} .`;
    }
    if (cmd.startsWith('clean ') || cmd.startsWith('heat ') || cmd.startsWith('cool ')) {
      const o = this.objs[this.holding];
      const verb = cmd.slice(0, cmd.indexOf(' '));
      if (verb === 'clean') o.clean = true;
      else if (verb === 'heat') {
        o.hot = true;
        o.cool = false;
      } else {
        o.cool = true;
        o.hot = false;
      }
      return `you ${verb} the ${o.name} using the ${r.name} .`;
    }
    if (cmd.startsWith('use ')) {
      const lamp = this.objs.find((x) => x.name === cmd.slice(4)) as Obj;
      lamp.on = true;
      return `you turn on the ${lamp.name} .`;
    }
    if (cmd.startsWith('examine ')) {
      if (cmd === `examine ${r.name}`) {
        if (r.openable && !r.open) return `the ${r.name} is closed .`;
        return this.reveal(r);
      }
      return this.examineHeld();
    }
    if (cmd === 'inventory') return this.inventoryText();
    return `you are facing the ${r.name} . next to it , you see nothing .`;
  }

  private lastLookMiddle(): string {
    return `you are in the middle of a room . looking quickly around you , you see ${listPhrase(this.receps.map((r) => r.name))} .`;
  }

  private examineHeld(): string {
    const o = this.objs[this.holding];
    const states = [o.clean ? 'clean' : '', o.hot ? 'hot' : '', o.cool ? 'cool' : ''].filter(Boolean);
    return states.length > 0 ? `this is a ${states.join(' and ')} ${o.name} .` : `there is nothing special about ${o.name} .`;
  }

  private inventoryText(): string {
    return this.holding >= 0 ? `you are carrying : a ${this.objs[this.holding].name} .` : 'you are not carrying anything .';
  }

  private satisfies(o: Obj): boolean {
    if (o.type !== this.targetType) return false;
    switch (this.task) {
      case 'pick_clean_then_place_in_recep':
        return o.clean;
      case 'pick_heat_then_place_in_recep':
        return o.hot;
      case 'pick_cool_then_place_in_recep':
        return o.cool;
      default:
        return true;
    }
  }

  private placedCount(): number {
    let n = 0;
    for (const o of this.objs) if (o.loc >= 0 && this.receps[o.loc].type === this.goalType && this.satisfies(o)) n++;
    return n;
  }

  private checkWon(): boolean {
    if (this.task === 'look_at_obj_in_light') {
      if (this.holding < 0 || this.objs[this.holding].type !== this.targetType || this.at < 0) return false;
      return this.receps[this.at].contents.some((o) => this.objs[o].lamp && this.objs[o].on);
    }
    return this.placedCount() >= (this.task === 'pick_two_obj_and_place' ? 2 : 1);
  }

  protected observe(): EnvObservation {
    this.admissible = this.done ? [] : this.computeAdmissible();
    this.admissibleSet = new Set(this.admissible);
    return { observation: this.lastText, task: this.taskText, admissibleActions: this.admissible };
  }

  render(): { text: string; picture: GridPicture | null } {
    const lines = [`task : ${this.taskText}`, `room : ${this.room} (layout ${this.layoutId})`];
    for (let i = 0; i < this.receps.length; i++) {
      const r = this.receps[i];
      const state = r.openable ? (r.open ? ' (open)' : ' (closed)') : '';
      const here = i === this.at ? ' <- you' : '';
      lines.push(`${r.name}${state} : ${r.contents.map((o) => this.objs[o].name).join(' , ') || '-'}${here}`);
    }
    lines.push(`carrying : ${this.holding >= 0 ? this.objs[this.holding].name : '-'}`);
    return { text: lines.join('\n'), picture: null };
  }

  // ---------------------------------------------------------------------------------------------- expert

  protected expert(): ExpertMove | null {
    const T = this.targetType;
    const held = this.holding >= 0 ? this.objs[this.holding] : null;
    const here = this.at >= 0 ? this.receps[this.at] : null;
    const go = (i: number, why: string): ExpertMove => ({ think: why, action: `go to ${this.receps[i].name}` });

    if (this.task === 'look_at_obj_in_light') {
      if (held !== null && held.type === T) {
        const lampIdx = this.objs.findIndex((o) => o.lamp);
        const lamp = this.objs[lampIdx];
        if (here !== null && here.contents.includes(lampIdx))
          return { think: `i hold the ${held.name} . turn on the ${lamp.name} .`, action: `use ${lamp.name}` };
        const seen = this.receps[lamp.loc].revealed;
        if (seen) return go(lamp.loc, `i hold the ${held.name} . the ${lamp.name} is on the ${this.receps[lamp.loc].name} .`);
        return this.explore(`i hold the ${held.name} . i need to find a desklamp .`);
      }
    } else if (held !== null && this.satisfies(held)) {
      const goal = this.nearestOfType(this.goalType);
      const g = this.receps[goal];
      if (this.at === goal) {
        if (g.openable && !g.open) return { think: `the ${g.name} is closed . open it .`, action: `open ${g.name}` };
        return { think: `put the ${held.name} in the ${g.name} .`, action: `put ${held.name} in/on ${g.name}` };
      }
      return go(goal, `i have the ${held.name} . now i put it in the ${this.goalType} .`);
    } else if (held !== null && held.type === T) {
      const tool = TASK_TOOL[this.task] as string;
      const verb = tool === 'sinkbasin' ? 'clean' : tool === 'microwave' ? 'heat' : 'cool';
      const ti = this.nearestOfType(tool);
      const t = this.receps[ti];
      if (this.at === ti) return { think: `${verb} the ${held.name} with the ${t.name} .`, action: `${verb} ${held.name} with ${t.name}` };
      return go(ti, `i have the ${held.name} . i need to ${verb} it with the ${tool} .`);
    }

    if (held !== null) {
      // Holding something useless (only after the policy's own moves): set it down here or somewhere open.
      if (here !== null && (!here.openable || here.open))
        return { think: `i do not need the ${held.name} . put it down .`, action: `put ${held.name} in/on ${here.name}` };
      const spot = this.receps.findIndex((r) => !r.openable);
      return go(spot, `i do not need the ${held.name} . find a place to put it down .`);
    }

    // Not holding: is a usable target object visible here or remembered elsewhere?
    if (here !== null) {
      const o = here.contents.find((x) => this.isCandidate(x));
      if (o !== undefined && here.openable && !here.open && here.revealed)
        return { think: `the ${this.objs[o].name} is in the closed ${here.name} . open it .`, action: `open ${here.name}` };
      if (o !== undefined && (!here.openable || here.open))
        return { think: `here is a ${this.objs[o].name} . take it .`, action: `take ${this.objs[o].name} from ${here.name}` };
    }
    for (let i = 0; i < this.receps.length; i++) {
      const r = this.receps[i];
      if (i === this.at || !r.revealed) continue;
      const o = r.contents.find((x) => this.isCandidate(x));
      if (o !== undefined) return go(i, `i saw a ${this.objs[o].name} on the ${r.name} . go there .`);
    }
    return this.explore(`i need a ${T} .`);
  }

  /** Candidate target objects: right type and not already placed in the goal receptacle. */
  private isCandidate(o: number): boolean {
    const x = this.objs[o];
    if (x.type !== this.targetType || x.lamp) return false;
    return !(x.loc >= 0 && this.receps[x.loc].type === this.goalType && this.satisfies(x));
  }

  /** Visit the next receptacle whose contents are unknown (open it when it is closed), in list order. */
  private explore(why: string): ExpertMove | null {
    const here = this.at >= 0 ? this.receps[this.at] : null;
    if (here !== null && here.openable && !here.open && !here.revealed)
      return { think: `${why} the ${here.name} is closed . open it .`, action: `open ${here.name}` };
    for (let i = 0; i < this.receps.length; i++) {
      if (!this.receps[i].revealed && i !== this.at)
        return { think: `${why} i have not checked the ${this.receps[i].name} yet .`, action: `go to ${this.receps[i].name}` };
    }
    return null;
  }

  private nearestOfType(type: string): number {
    return this.receps.findIndex((r) => r.type === type);
  }
}

function taskSentence(task: HouseholdTaskType, obj: string, goal: string): string {
  switch (task) {
    case 'pick_and_place_simple':
      return `put some ${obj} on ${goal} .`;
    case 'look_at_obj_in_light':
      return `look at ${obj} under the desklamp .`;
    case 'pick_clean_then_place_in_recep':
      return `put a clean ${obj} in ${goal} .`;
    case 'pick_heat_then_place_in_recep':
      return `heat some ${obj} and put it in ${goal} .`;
    case 'pick_cool_then_place_in_recep':
      return `cool some ${obj} and put it in ${goal} .`;
    case 'pick_two_obj_and_place':
      return `find two ${obj} and put them in ${goal} .`;
  }
}

/** Deterministic room layout: mandatory receptacle types, then optional ones, up to `maxReceps` instances. */
export function buildLayout(room: Room, layoutId: number, maxReceps: number): Recep[] {
  const rng = new Rng(hashSeed('household-layout', room, layoutId));
  const spec = ROOM_RECEPS[room];
  const types = [...spec.mandatory, ...rng.shuffle(spec.optional.slice())];
  const counts = new Map<string, number>();
  let total = 0;
  for (const t of types) {
    if (total >= maxReceps) break;
    const n = Math.min(1 + rng.int(RECEP[t].multi), maxReceps - total);
    counts.set(t, n);
    total += n;
  }
  const receps: Recep[] = [];
  for (const t of [...counts.keys()].sort()) {
    for (let k = 1; k <= (counts.get(t) as number); k++) {
      receps.push({ name: `${t} ${k}`, type: t, openable: RECEP[t].openable, open: false, contents: [], revealed: false });
    }
  }
  return receps;
}
