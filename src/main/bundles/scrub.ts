/**
 * Keep secrets and personal paths out of bundles: strings have the home directory and user-folder prefixes
 * (/home/<user>, /Users/<user>, C:\Users\<user>) replaced by `~`, and values under keys that look like
 * credentials are replaced by "[removed]". Environment variables are never collected in the first place.
 */
import { homedir, userInfo } from 'node:os';

const SECRET_KEY = /(token|secret|passw(or)?d|api[-_]?key|credential|auth|cookie|private[-_]?key)/i;
const USER_DIR = /(\/home\/[^/\s"']+|\/Users\/[^/\s"']+|[A-Za-z]:\\Users\\[^\\\s"']+)/g;

function homeVariants(): string[] {
  const out = new Set<string>();
  try {
    const h = homedir();
    if (h && h !== '/') out.add(h);
  } catch {
    // no home
  }
  return [...out].sort((a, b) => b.length - a.length);
}

let cachedUser: string | null | undefined;
function userName(): string | null {
  if (cachedUser === undefined) {
    try {
      cachedUser = userInfo().username || null;
    } catch {
      cachedUser = null;
    }
  }
  return cachedUser;
}

export function scrubString(s: string): string {
  let out = s;
  for (const h of homeVariants()) out = out.split(h).join('~');
  out = out.replace(USER_DIR, '~');
  const u = userName();
  if (u && u.length >= 3 && u !== 'root' && u !== 'node') {
    // A bare user name left in a path-like context (e.g. "C:/Users/alice" with forward slashes).
    out = out.replace(new RegExp(`([/\\\\])${u.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[/\\\\])`, 'g'), '$1~');
  }
  return out;
}

export function scrub<T>(value: T): T {
  const walk = (v: unknown, key: string | null): unknown => {
    if (key !== null && SECRET_KEY.test(key) && v !== null && typeof v !== 'object') return '[removed]';
    if (typeof v === 'string') return scrubString(v);
    if (Array.isArray(v)) return v.map((x) => walk(x, null));
    if (v && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[k] = walk(x, k);
      return o;
    }
    return v;
  };
  return walk(value, null) as T;
}
