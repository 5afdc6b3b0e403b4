/**
 * The shop's generated catalogue and goals (WebShop-style, spec §3.1). Everything is a pure function of
 * (catalogSeed, products, goals) and cached per key, so many env instances share one catalogue.
 *
 * Word lists are embedded here (small, lower-case) rather than shipped under resources/: five WebShop
 * categories, each with product types, attribute phrases and two option kinds with disjoint value sets.
 */
import { Rng, hashSeed } from '../util/rng';

interface CategorySpec {
  readonly types: readonly string[];
  readonly attributes: readonly string[];
  /** Two option kinds, e.g. size and color; value sets are disjoint within a category. */
  readonly options: Readonly<Record<string, readonly string[]>>;
  readonly price: readonly [number, number];
}

const CATEGORIES: Readonly<Record<string, CategorySpec>> = {
  fashion: {
    types: ['t-shirt', 'hoodie', 'jeans', 'dress', 'sneakers', 'boots', 'jacket', 'shorts', 'skirt', 'sweater', 'leggings', 'socks'],
    attributes: [
      'machine wash',
      'cotton',
      'slim fit',
      'relaxed fit',
      'long sleeve',
      'short sleeve',
      'water resistant',
      'quick dry',
      'lightweight',
      'stretch',
      'elastic waist',
      'non slip',
      'breathable',
    ],
    options: {
      size: ['xs', 's', 'm', 'l', 'xl', 'xxl'],
      color: ['black', 'white', 'navy', 'red', 'blue', 'green', 'grey', 'pink', 'beige', 'brown'],
    },
    price: [8, 90],
  },
  beauty: {
    types: ['shampoo', 'conditioner', 'lipstick', 'face cream', 'serum', 'perfume', 'nail polish', 'sunscreen', 'body wash', 'hair oil'],
    attributes: [
      'paraben free',
      'cruelty free',
      'long lasting',
      'natural ingredients',
      'sensitive skin',
      'vegan',
      'sulfate free',
      'dermatologist tested',
      'fragrance free',
    ],
    options: {
      size: ['travel size', 'small', 'medium', 'large', 'value pack'],
      scent: ['lavender', 'rose', 'vanilla', 'coconut', 'unscented', 'citrus', 'mint'],
    },
    price: [4, 60],
  },
  grocery: {
    types: ['coffee', 'tea', 'protein bar', 'snack mix', 'chocolate', 'jerky', 'granola', 'olive oil', 'honey', 'pasta'],
    attributes: ['gluten free', 'sugar free', 'non gmo', 'low carb', 'organic', 'keto friendly', 'high protein', 'dairy free', 'kosher'],
    options: {
      flavor: ['original', 'caramel', 'spicy', 'berry', 'salted', 'smoky', 'lemon'],
      count: ['pack of 1', 'pack of 2', 'pack of 6', 'pack of 12'],
    },
    price: [3, 45],
  },
  furniture: {
    types: ['office chair', 'desk', 'bookshelf', 'sofa', 'bed frame', 'nightstand', 'dining table', 'stool', 'tv stand', 'storage cabinet'],
    attributes: [
      'easy assembly',
      'solid wood',
      'storage space',
      'adjustable height',
      'metal frame',
      'living room',
      'home office',
      'space saving',
    ],
    options: {
      color: ['oak', 'walnut', 'espresso', 'black', 'white', 'grey'],
      size: ['small', 'medium', 'large', 'twin', 'queen', 'king'],
    },
    price: [25, 400],
  },
  electronics: {
    types: ['headphones', 'phone case', 'charger', 'usb cable', 'speaker', 'keyboard', 'mouse', 'power bank', 'smart watch', 'webcam'],
    attributes: [
      'fast charging',
      'wireless',
      'noise cancelling',
      'long battery life',
      'high speed',
      'water resistant',
      'easy install',
      'hands free',
      'usb c',
    ],
    options: { color: ['black', 'white', 'silver', 'blue', 'red', 'gold'], model: ['standard', 'pro', 'mini', 'max'] },
    price: [6, 150],
  },
};

const BRANDS = [
  'nordik',
  'alto',
  'brava',
  'cirrus',
  'dunmore',
  'elvo',
  'fenwick',
  'goldia',
  'halden',
  'iris',
  'juno',
  'kestrel',
  'lumo',
  'marlow',
  'nova',
  'orrin',
  'pello',
  'quill',
  'rowan',
  'sable',
  'tamsin',
  'ulla',
  'vesper',
  'wren',
  'yarrow',
  'zephyr',
];
const ADJECTIVES = ['classic', 'premium', 'soft', 'modern', 'compact', 'durable', 'everyday', 'essential', 'deluxe', 'simple'];
const FILLER = [
  'a great choice for daily use .',
  'designed to last and easy to care for .',
  'our customers love the quality .',
  'backed by a one year guarantee .',
  'makes a thoughtful gift .',
];

export interface Product {
  readonly id: string;
  readonly index: number;
  readonly category: string;
  readonly type: string;
  readonly title: string;
  readonly price: number;
  readonly attributes: readonly string[];
  /** Option kind → available values (in display order). */
  readonly options: Readonly<Record<string, readonly string[]>>;
  readonly description: string;
  readonly features: readonly string[];
}

export interface Goal {
  readonly index: number;
  readonly product: number;
  readonly category: string;
  readonly type: string;
  readonly attributes: readonly string[];
  /** Option kind → wanted value. */
  readonly options: Readonly<Record<string, string>>;
  readonly priceUpper: number;
  readonly instruction: string;
}

export interface Catalog {
  readonly products: readonly Product[];
  /** Number of indexed goals; goal i is built on first use (`goalAt`). */
  readonly nGoals: number;
  readonly catalogSeed: number;
  /** Goals built so far, by index. */
  readonly goalCache: Map<number, Goal>;
  /** Token → product indices (sorted). */
  readonly index: ReadonlyMap<string, Int32Array>;
  readonly idf: ReadonlyMap<string, number>;
  readonly byId: ReadonlyMap<string, number>;
}

/** Held-out goals are indices [0, HELD_OUT_GOALS) (WebShop: test goals idx < 500); training uses the rest. */
export const HELD_OUT_GOALS = 500;

export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9-]+/)
    .filter((t) => t.length > 0);
}

function subset<T>(rng: Rng, items: readonly T[], n: number): T[] {
  return rng.shuffle(items.slice()).slice(0, n);
}

function makeProduct(rng: Rng, index: number): Product {
  const catNames = Object.keys(CATEGORIES);
  const category = catNames[rng.int(catNames.length)];
  const c = CATEGORIES[category];
  const type = rng.pick(c.types);
  const attributes = subset(rng, c.attributes, 2 + rng.int(3)).sort();
  const options: Record<string, string[]> = {};
  for (const [kind, values] of Object.entries(c.options)) {
    const picked = new Set(subset(rng, values, 2 + rng.int(Math.min(4, values.length - 1))));
    options[kind] = values.filter((v) => picked.has(v));
  }
  const brand = rng.pick(BRANDS);
  const adj = rng.pick(ADJECTIVES);
  const title = `${brand} ${adj} ${attributes[0]} ${type}`;
  const [lo, hi] = c.price;
  const price = Math.round((lo + rng.float() * (hi - lo)) * 100) / 100;
  const description = `this ${type} from ${brand} is ${attributes.join(' and ')} . ${rng.pick(FILLER)}`;
  const features = [...attributes, `${adj} design`];
  return { id: `b${String(index).padStart(5, '0')}`, index, category, type, title, price, attributes, options, description, features };
}

const PREFIXES = ['i need', 'i am looking for', 'find me', 'i want'];

function makeGoal(rng: Rng, index: number, products: readonly Product[]): Goal {
  const p = products[rng.int(products.length)];
  const attributes = subset(rng, p.attributes, 1 + rng.int(2)).sort();
  const options: Record<string, string> = {};
  for (const [kind, values] of Object.entries(p.options)) options[kind] = rng.pick(values);
  // A round bound above the price, like WebShop's "price lower than 40.00 dollars".
  const step = p.price < 50 ? 10 : 50;
  const priceUpper = (Math.floor(p.price / step) + 1 + rng.int(2)) * step;
  const opts = Object.entries(options).map(([k, v]) => (k === 'count' ? v : `${k} ${v}`));
  const instruction = `${rng.pick(PREFIXES)} ${attributes.join(' and ')} ${p.type} with ${opts.join(' and ')} , and price lower than ${priceUpper}.00 dollars`;
  return { index, product: p.index, category: p.category, type: p.type, attributes, options, priceUpper, instruction };
}

const cache = new Map<string, Catalog>();

export function getCatalog(catalogSeed: number, nProducts: number, nGoals: number): Catalog {
  const key = `${catalogSeed}/${nProducts}/${nGoals}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const rng = new Rng(hashSeed('shop-catalog', catalogSeed));
  const products: Product[] = [];
  for (let i = 0; i < nProducts; i++) products.push(makeProduct(rng, i));
  const lists = new Map<string, number[]>();
  for (const p of products) {
    const toks = new Set(tokenize(`${p.title} ${p.type} ${p.category} ${p.attributes.join(' ')}`));
    for (const t of toks) {
      let l = lists.get(t);
      if (!l) lists.set(t, (l = []));
      l.push(p.index);
    }
  }
  const index = new Map<string, Int32Array>();
  const idf = new Map<string, number>();
  for (const [t, l] of lists) {
    index.set(t, Int32Array.from(l));
    idf.set(t, Math.log(1 + nProducts / l.length));
  }
  const byId = new Map(products.map((p) => [p.id, p.index] as [string, number]));
  const cat: Catalog = { products, nGoals, catalogSeed, goalCache: new Map(), index, idf, byId };
  if (cache.size > 8) cache.clear();
  cache.set(key, cat);
  return cat;
}

/** Goal `i` of the catalogue: a pure function of (catalogSeed, i) and the products. */
export function goalAt(cat: Catalog, i: number): Goal {
  if (!Number.isInteger(i) || i < 0 || i >= cat.nGoals) throw new RangeError(`shop goal index ${i} outside [0, ${cat.nGoals})`);
  let g = cat.goalCache.get(i);
  if (!g) {
    g = makeGoal(new Rng(hashSeed('shop-goal', cat.catalogSeed, i)), i, cat.products);
    cat.goalCache.set(i, g);
  }
  return g;
}

/** Token-overlap search with idf weights (a light stand-in for WebShop's BM25); best first, ties by index. */
export function search(cat: Catalog, query: string, limit: number, scratch: Float64Array): number[] {
  const touched: number[] = [];
  for (const t of new Set(tokenize(query))) {
    const postings = cat.index.get(t);
    if (!postings) continue;
    const w = cat.idf.get(t) as number;
    for (let i = 0; i < postings.length; i++) {
      const p = postings[i];
      if (scratch[p] === 0) touched.push(p);
      scratch[p] += w;
    }
  }
  touched.sort((a, b) => scratch[b] - scratch[a] || a - b);
  const out = touched.slice(0, limit);
  for (const p of touched) scratch[p] = 0;
  return out;
}

/**
 * WebShop's score for buying `p` with `chosen` options against goal `g`:
 * (matched attributes + matched options + price ok) / (attributes + options + 1), times the type factor
 * (1 same product type, 0.5 same category, 0.1 otherwise).
 */
export function scorePurchase(g: Goal, p: Product, chosen: Readonly<Record<string, string>>): number {
  const rType = p.type === g.type ? 1 : p.category === g.category ? 0.5 : 0.1;
  let hits = 0;
  for (const a of g.attributes) if (p.attributes.includes(a)) hits++;
  const kinds = Object.keys(g.options);
  for (const k of kinds) if (chosen[k] === g.options[k]) hits++;
  if (p.price <= g.priceUpper) hits++;
  return (rType * hits) / (g.attributes.length + kinds.length + 1);
}

export const SHOP_CATEGORY_NAMES = Object.keys(CATEGORIES);
