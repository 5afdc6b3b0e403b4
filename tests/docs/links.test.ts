/**
 * The README and docs/ as a user's clone sees them: every relative link and image points at a file of the
 * repository (and a `#anchor` into a Markdown page at one of its headings), nothing points into ../shared
 * (the team's shared folder, which a clone does not have), and the README stays a front door (≤ 200 lines).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function markdownFiles(): string[] {
  const out = ['README.md', 'CHANGELOG.md'].map((f) => join(ROOT, f)).filter((f) => existsSync(f));
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.md')) out.push(p);
    }
  };
  if (existsSync(join(ROOT, 'docs'))) walk(join(ROOT, 'docs'));
  return out;
}

/** Markdown without its fenced code blocks. */
function withoutFences(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** Markdown without its fenced and inline code, where `[x](y)` is not a link. */
function withoutCode(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, '');
}

/** Targets of inline links and images, `[text](target "title")`, and of reference definitions `[id]: target`. */
export function linkTargets(text: string): string[] {
  const body = withoutCode(text);
  const out: string[] = [];
  for (const m of body.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]);
  for (const m of body.matchAll(/^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) out.push(m[1]);
  return out;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2 … */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  // A heading's inline code counts (GitHub slugs `bench:ui` as benchui); a fenced block's # lines are not headings.
  for (const m of withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]
      .toLowerCase()
      .replace(/<[^>]+>/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    anchors.add(n === 0 ? base : `${base}-${n}`);
    seen.set(base, n + 1);
  }
  return anchors;
}

const files = markdownFiles();

describe('README.md and docs/ links', () => {
  it('finds the pages', () => {
    expect(files.map((f) => relative(ROOT, f))).toContain('README.md');
    expect(files.some((f) => relative(ROOT, f).startsWith('docs'))).toBe(true);
  });

  it('the checker itself sees links, images, anchors and skips code', () => {
    const sample =
      '# A title\n[a](docs/x.md) ![i](img/y.png "t") `[no](z.md)`\n```\n[no](w.md)\n# not a heading\n```\n[ref]: ../b.md\n## Two words (`npm run x:y`)\n## Two words (`npm run x:y`)\n';
    expect(linkTargets(sample)).toEqual(['docs/x.md', 'img/y.png', '../b.md']);
    expect([...headingAnchors(sample)]).toEqual(['a-title', 'two-words-npm-run-xy', 'two-words-npm-run-xy-1']);
  });

  it.each(files.map((f) => [relative(ROOT, f), f]))('%s: every relative link resolves to a file of the repository', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    const broken: string[] = [];
    for (const target of linkTargets(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [pathPart, anchor] = target.split('#', 2);
      const path = decodeURIComponent(pathPart);
      const abs = path === '' ? file : resolve(dirname(file), path);
      if (!abs.startsWith(ROOT + '/') && abs !== ROOT) {
        broken.push(`${target} (outside the repository)`);
        continue;
      }
      if (!existsSync(abs)) {
        broken.push(`${target} (no such file)`);
        continue;
      }
      if (anchor && abs.endsWith('.md') && !headingAnchors(readFileSync(abs, 'utf8')).has(anchor)) {
        broken.push(`${target} (no heading #${anchor} in ${relative(ROOT, abs)})`);
      }
    }
    expect(broken, `broken links in ${relative(ROOT, file)}`).toEqual([]);
  });

  it.each(files.map((f) => [relative(ROOT, f), f]))('%s: says nothing about ../shared (a clone does not have it)', (_name, file) => {
    const lines = readFileSync(file, 'utf8').split('\n');
    const hits = lines.map((l, i) => `${i + 1}: ${l}`).filter((l) => /\.\.\/shared\b/.test(l));
    expect(hits, 'write "where the shared real-run folder is present" instead').toEqual([]);
  });

  it('every page under docs/ can be reached from README.md by following links', () => {
    const seen = new Set<string>();
    const queue = [join(ROOT, 'README.md')];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file) || !existsSync(file) || !file.endsWith('.md')) continue;
      seen.add(file);
      for (const target of linkTargets(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const path = decodeURIComponent(target.split('#', 1)[0]);
        if (path !== '') queue.push(resolve(dirname(file), path));
      }
    }
    const orphans = files.filter((f) => !seen.has(f)).map((f) => relative(ROOT, f));
    expect(orphans, 'link these pages from docs/README.md (or from a page it links)').toEqual([]);
  });

  it('README.md is a front door: at most 200 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
    expect(lines).toBeLessThanOrEqual(200);
  });
});
