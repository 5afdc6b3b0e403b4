/**
 * Keep secrets and personal paths out of bundles: strings have the home directory and user-folder prefixes
 * (/home/<user>, /Users/<user>, C:\Users\<user>) replaced by `~`, and string values under keys that name
 * credentials are replaced by "[removed]". Environment variables are never collected in the first place.
 */
import { homedir, userInfo } from 'node:os';

/**
 * Keys whose string values are credentials. Deliberately narrow: config fields such as
 * `rollout.maxResponseTokens` must survive (a bundle must rerun), so a bare "token" inside a longer word is
 * not enough — only names that are credentials (apiToken, access_token, password, secret, apiKey, cookie…).
 */
const SECRET_KEY =
  /^(token|secret|password|passwd|cookie|credentials?)$|(api|access|auth|bearer|refresh|session|private|secret|client)[-_]?(token|key|secret)$|password$|passwd$|credentials?$/i;
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
    if (key !== null && typeof v === 'string' && SECRET_KEY.test(key)) return '[removed]';
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
