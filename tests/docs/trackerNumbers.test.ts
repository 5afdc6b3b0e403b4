/**
 * Code comments and test titles say why, never which of our tracker's issues asked for the code: a reader of the
 * code (a clone, a reviewer, a newcomer) cannot open our tracker, so the number carries nothing and the reason is
 * lost. References into other projects stay: the project's name comes before the number (RAGEN #52, verl #747 /
 * #2626, open-r1 #587, owner/repo#123, a pull-request link). Scanned: the comments of the code and config files
 * under src, bench, e2e, scripts, tests, resources, bin and .ci and of the config files at the root, and the titles
 * of describe / it / test. Markdown (docs, READMEs) and the CHANGELOG may name issues: they are history, not code.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ROOTS = ['src', 'bench', 'e2e', 'scripts', 'tests', 'resources', 'bin', '.ci'];
const SKIP_DIRS = new Set(['node_modules', 'out', 'test-results', '__pycache__', '.venvs']);
/**
 * The pinned peer requirements are left out: scripts/setup.sh rebuilds a venv whenever its file's hash changes
 * (ms-swift's takes minutes and 5 GB), so their comments are reworded with the next change of a pin.
 */
const SKIP_FILES = /^tests\/peers\/(?:venvs\/[^/]+|requirements)\.txt$/;
const JS_LIKE = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);
const HASH_COMMENTED = new Set(['.py', '.sh', '.yaml', '.yml', '.toml', '.txt', '.cfg', '.ini']);
const MARKUP = new Set(['.svelte', '.html']);

/**
 * The word issue (or issues, any case) and a number, or a bare hash and one to four digits (not after a letter, not
 * an HTML entity, not a colour's six digits). Whether the match is ours is decided from what precedes it
 * (ownReferences).
 */
const REFERENCE = /\bissues?[\s-]*#?\s*\d+\b|(?<![\w&#])#\d{1,4}\b(?![\w-])/gi;
/** Words that stand before a cited number without naming another project: "the", "see", "fixes", "our". */
const NOT_A_PROJECT = new Set(
  (
    'a an the this that these those our same see cf in of from and or per which by as for with to on at ' +
    'fix fixes fixed close closes closed resolve resolves resolved tracker ticket item items issue issues also'
  ).split(' '),
);

/** A comment's text with its line decorations (" * ", "// ", "# ") taken out, offsets kept. */
function undecorated(text: string): string {
  return text.replace(/(^|\n)([ \t]*)(\/\*+|\*\/|\*|\/\/+|#+|<!--|-->)/g, (_m, nl: string, sp: string, deco: string) => {
    return nl + sp + ' '.repeat(deco.length);
  });
}

/** Offsets in `text` (a comment or a test title) where one of our tracker numbers is cited. */
export function ownReferences(text: string): number[] {
  const plain = undecorated(text);
  const out: number[] = [];
  let lastExternalEnd = -1;
  for (const m of plain.matchAll(REFERENCE)) {
    const at = m.index;
    const before = plain.slice(0, at);
    // "verl #747 / #2626": a number chained onto an external reference belongs to the same project.
    const chained = lastExternalEnd >= 0 && /^\s*(?:\/|,|and|or|&)\s*$/.test(plain.slice(lastExternalEnd, at));
    const word = /([A-Za-z][\w.-]*(?:\/[\w.-]+)*)\s+$/.exec(before)?.[1];
    const external = chained || (word !== undefined && !NOT_A_PROJECT.has(word.toLowerCase()));
    if (external) lastExternalEnd = at + m[0].length;
    else out.push(at);
  }
  return out;
}

export interface Hit {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** Comments and test titles of a TypeScript / JavaScript source, each with its offset in `text`. */
function jsChunks(text: string, fileName: string): Array<{ at: number; text: string }> {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const chunks = new Map<number, string>();
  const addComments = (ranges: readonly ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) chunks.set(r.pos, text.slice(r.pos, r.end));
  };
  const TEST_FNS = new Set(['describe', 'it', 'test', 'suite', 'bench']);
  const baseName = (e: ts.Expression): string | undefined =>
    ts.isIdentifier(e) ? e.text : ts.isPropertyAccessExpression(e) || ts.isCallExpression(e) ? baseName(e.expression) : undefined;
  const visit = (node: ts.Node): void => {
    addComments(ts.getLeadingCommentRanges(text, node.pos));
    addComments(ts.getTrailingCommentRanges(text, node.end));
    if (ts.isCallExpression(node) && TEST_FNS.has(baseName(node.expression) ?? '')) {
      const title = node.arguments[0];
      if (title && (ts.isStringLiteral(title) || ts.isNoSubstitutionTemplateLiteral(title) || ts.isTemplateExpression(title))) {
        chunks.set(title.getStart(sf), title.getText(sf));
      }
    }
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  return [...chunks].map(([at, t]) => ({ at, text: t }));
}

/** Where a file of the given name and text cites our tracker in a comment or a test title. */
export function scanSource(file: string, text: string): Hit[] {
  // Most files cite nothing: only those with a candidate anywhere are parsed.
  if (!new RegExp(REFERENCE.source, 'i').test(text)) return [];
  const ext = extname(file);
  const chunks: Array<{ at: number; text: string }> = [];
  if (JS_LIKE.has(ext)) chunks.push(...jsChunks(text, file));
  else if (MARKUP.has(ext)) {
    for (const m of text.matchAll(/(<script\b[^>]*>)([\s\S]*?)<\/script>/g)) {
      const start = m.index + m[1].length;
      for (const c of jsChunks(m[2], `${file}.ts`)) chunks.push({ at: start + c.at, text: c.text });
    }
    for (const m of text.matchAll(/<!--[\s\S]*?-->|\/\*[\s\S]*?\*\//g)) {
      const inScript = [...text.matchAll(/<script\b[^>]*>[\s\S]*?<\/script>/g)].some(
        (s) => m.index > s.index && m.index < s.index + s[0].length,
      );
      if (!inScript) chunks.push({ at: m.index, text: m[0] });
    }
  } else if (ext === '.css') {
    for (const m of text.matchAll(/\/\*[\s\S]*?\*\//g)) chunks.push({ at: m.index, text: m[0] });
  } else {
    // '#' comments (Python, shell, YAML, TOML, pip files, extensionless scripts) and Python's docstrings.
    for (const m of text.matchAll(/(?<=^|\s)#[^\n]*/g)) chunks.push({ at: m.index, text: m[0] });
    if (ext === '.py') for (const m of text.matchAll(/("""|''')[\s\S]*?\1/g)) chunks.push({ at: m.index, text: m[0] });
  }
  const hits: Hit[] = [];
  const seen = new Set<number>();
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const lineOf = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  for (const c of chunks) {
    for (const off of ownReferences(c.text)) {
      if (seen.has(c.at + off)) continue; // a '#' line inside a docstring is read twice
      seen.add(c.at + off);
      const line = lineOf(c.at + off);
      hits.push({ file, line, text: text.slice(lineStarts[line - 1], lineStarts[line] ?? text.length).trim() });
    }
  }
  return hits.sort((a, b) => a.line - b.line);
}

function scannedFiles(): string[] {
  const out: string[] = [];
  const wanted = (rel: string): boolean => {
    if (SKIP_FILES.test(rel)) return false;
    const ext = extname(rel);
    if (JS_LIKE.has(ext) || HASH_COMMENTED.has(ext) || MARKUP.has(ext) || ext === '.css') return true;
    return rel.startsWith('.ci/') || rel.startsWith('bin/'); // extensionless scripts
  };
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        if (!SKIP_DIRS.has(name)) walk(p);
      } else if (wanted(relative(ROOT, p))) out.push(p);
    }
  };
  for (const r of ROOTS) if (existsSync(join(ROOT, r))) walk(join(ROOT, r));
  for (const name of readdirSync(ROOT)) {
    if (/\.(?:[cm]?[jt]s)$/.test(name) && statSync(join(ROOT, name)).isFile()) out.push(join(ROOT, name));
  }
  return out.sort();
}

const format = (h: Hit): string => `${h.file}:${h.line}: ${h.text}`;

describe('our tracker numbers stay out of code comments and test titles', () => {
  it('flags ours with file:line and keeps other projects’ references', () => {
    const planted = [
      '/**',
      ' * Issue 17: values that vanish in float32.',
      ' * Reads tensor by tensor (issue 35: bounded memory); as RAGEN #52 and verl #747 / #2626 report,',
      ' * open-r1',
      ' * #587 and huggingface/trl#1234 too. See #36.',
      ' */',
      "const colour = '#36'; // a string is no comment: '#fff', &#39;, #336699",
      "it('issue-18: a title that cites the tracker', () => {});",
      "describe.each([1])('the issues #3 and 4 %s', () => {});",
      'const x = 1; // (#12) trailing',
      "it('a title that says the behaviour', () => {}); // verl issue 1200 names verl's tracker",
    ].join('\n');
    expect(scanSource('planted.ts', planted).map(format)).toEqual([
      'planted.ts:2: * Issue 17: values that vanish in float32.',
      'planted.ts:3: * Reads tensor by tensor (issue 35: bounded memory); as RAGEN #52 and verl #747 / #2626 report,',
      'planted.ts:5: * #587 and huggingface/trl#1234 too. See #36.',
      "planted.ts:8: it('issue-18: a title that cites the tracker', () => {});",
      "planted.ts:9: describe.each([1])('the issues #3 and 4 %s', () => {});",
      'planted.ts:10: const x = 1; // (#12) trailing',
    ]);
    expect(scanSource('p.py', '"""Peer for issue 31."""\nx = "#5"  # Ray #123 is theirs\n# our #9\n').map(format)).toEqual([
      'p.py:1: """Peer for issue 31."""',
      'p.py:3: # our #9',
    ]);
    expect(
      scanSource('v.svelte', '<script lang="ts">\n  // issue 18\n</script>\n<!-- (issue 19) -->\n<p>#1 of 3</p>\n').map(format),
    ).toEqual(['v.svelte:2: // issue 18', 'v.svelte:4: <!-- (issue 19) -->']);
  });

  it('no comment or test title in the code cites our tracker (say the reason instead)', () => {
    const files = scannedFiles();
    expect(files.length).toBeGreaterThan(500);
    expect(files.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['electron.vite.config.ts', '.ci/run', 'bin/arlarena.mjs']));
    const hits = files.flatMap((f) => scanSource(relative(ROOT, f), readFileSync(f, 'utf8')));
    expect(hits.map(format)).toEqual([]);
  });
});
