/**
 * Shop (WebShop-style, spec §3.1–3.3): a generated catalogue (shopCatalog.ts), an instruction naming a
 * product type, attributes, option values and a price bound; pages — search, results (paged), item (with
 * options), description, features — joined by " [SEP] " as WebShop's text env does; actions `search[…]` and
 * `click[…]`. Buying ends the episode with WebShop's score; reward 10 when the score is 1, else 0; horizon 15.
 *
 * Invalid actions (unknown syntax, a click on something not on the page, a search without a search bar)
 * leave the page unchanged, as in WebShop. The paper counts every WebShop action as valid; we report
 * actionValid = false for those, because our contract defines v_r as "admissible" (TestbedEnv).
 *
 * Goal splits: goals are indexed; held-out seeds (≥ 10⁹) draw from goals [0, 500), training seeds from
 * goals [500, goals) — WebShop keeps goal idx < 500 for test.
 */
import { hashSeed } from '../util/rng';
import { BaseEnv, type Transition } from './base';
import { projectStrict } from './parse';
import { resolveSettings, type SettingSpec } from './settings';
import { HELD_OUT_GOALS, getCatalog, goalAt, scorePurchase, search, type Catalog, type Goal, type Product } from './shopCatalog';
import { HELD_OUT_BASE, HELD_OUT_OOD_BASE, isHeldOutSeed } from './splits';
import type { ActionProjection, EnvObservation, ExpertMove, GridPicture } from './types';

export const SHOP_SETTINGS: Readonly<Record<string, SettingSpec>> = {
  maxSteps: { type: 'integer', default: 15, min: 3, max: 100, doc: 'Horizon in turns (WebShop: 15).' },
  products: { type: 'integer', default: 2000, min: 200, max: 20000, doc: 'Catalogue size (WebShop small set: 1,000).' },
  goals: { type: 'integer', default: 6000, min: 1000, max: 50000, doc: 'Number of indexed goals; the first 500 are held out.' },
  catalogSeed: {
    type: 'integer',
    default: 0,
    min: 0,
    max: 1_000_000,
    doc: 'Seed of the catalogue and goal list (keep fixed across runs).',
  },
  resultsPerPage: { type: 'integer', default: 5, min: 1, max: 10, doc: 'Results shown per page (WebShop: 10; fewer keeps prompts short).' },
  maxResults: { type: 'integer', default: 50, min: 5, max: 100, doc: 'Results returned by a search (WebShop: 50).' },
};

const INTRO =
  'you are an expert autonomous agent in an online shop . you search and click to buy the product that matches the instruction .';
const SEARCH_SLOT = 'search[<your query>]';

type Page = 'search' | 'results' | 'item' | 'description' | 'features';

export class ShopEnv extends BaseEnv {
  readonly name = 'shop';
  readonly promptIntro = INTRO;
  readonly settings: Readonly<Record<string, number>>;
  private readonly cat: Catalog;
  private readonly scratch: Float64Array;
  private goal: Goal;
  private page: Page = 'search';
  private results: number[] = [];
  private pageNo = 0;
  private item = -1;
  private chosen: Record<string, string> = {};
  private clickables: string[] = [];
  private text = '';

  constructor(settings?: Record<string, unknown>) {
    const s = resolveSettings('shop', SHOP_SETTINGS, settings) as Record<string, number>;
    super(s.maxSteps);
    this.settings = s;
    this.cat = getCatalog(s.catalogSeed, s.products, s.goals);
    this.scratch = new Float64Array(s.products);
    this.goal = goalAt(this.cat, HELD_OUT_GOALS);
  }

  parse(response: string): ActionProjection {
    return projectStrict(response);
  }

  /** Goal index for a seed: held-out seeds → [0, 500), training seeds → [500, goals). */
  goalIndex(seed: number): number {
    const n = this.settings.goals;
    if (isHeldOutSeed(seed)) {
      const j = seed >= HELD_OUT_OOD_BASE ? seed - HELD_OUT_OOD_BASE + HELD_OUT_GOALS / 2 : seed - HELD_OUT_BASE;
      return j % HELD_OUT_GOALS;
    }
    return HELD_OUT_GOALS + (hashSeed('shop-task', seed) % (n - HELD_OUT_GOALS));
  }

  taskId(): string {
    return `shop/goal-${this.goal.index}/${this.seed}`;
  }

  taskType(): string {
    return this.goal.category;
  }

  /** Every product id of the catalog in effect (one tokenizer piece each; see tokenizer.ts, version 2). */
  identifiers(): readonly string[] {
    return this.cat.products.map((p) => p.id);
  }

  /** The current goal (for tests and the UI). */
  currentGoal(): Goal {
    return this.goal;
  }

  protected resetTask(seed: number): void {
    this.goal = goalAt(this.cat, this.goalIndex(seed));
    this.page = 'search';
    this.results = [];
    this.pageNo = 0;
    this.item = -1;
    this.chosen = {};
    this.render_();
  }

  private product(): Product {
    return this.cat.products[this.item];
  }

  private pageCount(): number {
    return Math.max(1, Math.ceil(this.results.length / this.settings.resultsPerPage));
  }

  /** Rebuild the page text and its clickables. */
  private render_(): void {
    const parts: string[] = [];
    const clicks: string[] = [];
    if (this.page === 'search') {
      parts.push('search');
    } else if (this.page === 'results') {
      clicks.push('back to search');
      parts.push('back to search', `page ${this.pageNo + 1} ( total results : ${this.results.length} )`);
      if (this.pageNo > 0) {
        clicks.push('< prev');
        parts.push('< prev');
      }
      if (this.pageNo + 1 < this.pageCount()) {
        clicks.push('next >');
        parts.push('next >');
      }
      const per = this.settings.resultsPerPage;
      for (const i of this.results.slice(this.pageNo * per, this.pageNo * per + per)) {
        const p = this.cat.products[i];
        clicks.push(p.id);
        parts.push(p.id, p.title, `$${p.price.toFixed(2)}`);
      }
    } else {
      const p = this.product();
      clicks.push('back to search', '< prev');
      parts.push('back to search', '< prev');
      if (this.page === 'item') {
        for (const [kind, values] of Object.entries(p.options)) {
          parts.push(kind, ...values);
          clicks.push(...values);
        }
        parts.push(p.title, `price : $${p.price.toFixed(2)}`, 'description', 'features', 'buy now');
        clicks.push('description', 'features', 'buy now');
      } else if (this.page === 'description') {
        parts.push(p.description);
      } else {
        parts.push(...p.features);
      }
    }
    this.text = parts.join(' [SEP] ');
    this.clickables = clicks;
  }

  protected apply(p: ActionProjection): Transition {
    const a = p.applied;
    const none: Transition = { reward: 0, admissible: false, won: false, lost: false, score: 0, applied: a };
    if (a.startsWith('search[') && a.endsWith(']')) {
      if (this.page !== 'search') return none;
      const q = a.slice(7, -1).trim();
      if (q.length === 0 || q === '<your query>') return none;
      this.results = search(this.cat, q, this.settings.maxResults, this.scratch);
      this.page = 'results';
      this.pageNo = 0;
      this.render_();
      return { ...none, admissible: true };
    }
    if (!(a.startsWith('click[') && a.endsWith(']'))) return none;
    const target = a.slice(6, -1).trim();
    if (!this.clickables.includes(target)) return none;
    if (target === 'buy now') {
      const score = scorePurchase(this.goal, this.product(), this.chosen);
      const won = score >= 1 - 1e-9;
      return { reward: won ? 10 : 0, admissible: true, won, lost: !won, score, applied: a };
    }
    if (target === 'back to search') {
      this.page = 'search';
      this.results = [];
      this.item = -1;
      this.chosen = {};
    } else if (target === '< prev') {
      if (this.page === 'results') this.pageNo--;
      else if (this.page === 'item') this.page = 'results';
      else this.page = 'item';
    } else if (target === 'next >') {
      this.pageNo++;
    } else if (this.page === 'results') {
      this.item = this.cat.byId.get(target) as number;
      this.chosen = {};
      this.page = 'item';
    } else if (target === 'description' || target === 'features') {
      this.page = target;
    } else {
      // An option value on the item page (kinds have disjoint values within a category).
      for (const [kind, values] of Object.entries(this.product().options)) if (values.includes(target)) this.chosen[kind] = target;
    }
    this.render_();
    return { ...none, admissible: true };
  }

  protected observe(): EnvObservation {
    const actions = this.done ? [] : this.page === 'search' ? [SEARCH_SLOT] : this.clickables.map((c) => `click[${c}]`);
    return { observation: this.text, task: this.goal.instruction, admissibleActions: actions };
  }

  render(): { text: string; picture: GridPicture | null } {
    const chosen =
      Object.entries(this.chosen)
        .map(([k, v]) => `${k} ${v}`)
        .join(' , ') || '-';
    return {
      text: `instruction : ${this.goal.instruction}\npage : ${this.page}\nselected : ${chosen}\n\n${this.text.split(' [SEP] ').join('\n')}`,
      picture: null,
    };
  }

  // ---------------------------------------------------------------------------------------------- expert

  private satisfiesGoal(i: number): boolean {
    const p = this.cat.products[i];
    const g = this.goal;
    if (p.type !== g.type || p.price > g.priceUpper) return false;
    if (!g.attributes.every((a) => p.attributes.includes(a))) return false;
    return Object.entries(g.options).every(([k, v]) => p.options[k]?.includes(v));
  }

  protected expert(): ExpertMove | null {
    const g = this.goal;
    if (this.page === 'search') {
      return {
        think: `i need ${g.type} that is ${g.attributes.join(' and ')} . search for it .`,
        action: `search[${g.attributes.join(' ')} ${g.type}]`,
      };
    }
    if (this.page === 'results') {
      const per = this.settings.resultsPerPage;
      const shown = this.results.slice(this.pageNo * per, this.pageNo * per + per);
      const hit = shown.find((i) => this.satisfiesGoal(i));
      if (hit !== undefined) {
        const p = this.cat.products[hit];
        return {
          think: `${p.id} is a ${g.type} for $${p.price.toFixed(2)} , under ${g.priceUpper} dollars . open it .`,
          action: `click[${p.id}]`,
        };
      }
      const later = this.results.slice((this.pageNo + 1) * per).some((i) => this.satisfiesGoal(i));
      if (later) return { think: 'nothing on this page matches . try the next page .', action: 'click[next >]' };
      const earlier = this.results.slice(0, this.pageNo * per).some((i) => this.satisfiesGoal(i));
      if (earlier) return { think: 'the match was on an earlier page . go back .', action: 'click[< prev]' };
      return { think: 'no result matches . search again .', action: 'click[back to search]' };
    }
    if (this.page !== 'item') return { think: 'go back to the item page .', action: 'click[< prev]' };
    if (!this.satisfiesGoal(this.item)) return { think: 'this item does not match . go back .', action: 'click[< prev]' };
    for (const [kind, value] of Object.entries(g.options)) {
      if (this.chosen[kind] !== value) return { think: `the instruction wants ${kind} ${value} . select it .`, action: `click[${value}]` };
    }
    return { think: 'type , attributes , options and price all match . buy it .', action: 'click[buy now]' };
  }
}
