/**
 * Arms of a study: named (preset + config overrides) cells compared with a stated baseline arm, for studies whose
 * question is a setting rather than a method (the rollout-mismatch study: int8 rollouts against fp32, corrected
 * against uncorrected). One spec per arm, the same on the command line and in an arms file:
 *
 *   NAME=PRESET[;KEY=VALUE…][ vs BASELINE]
 *
 * e.g. `sampo-int8-tis=sampo;compute.rolloutPrecision=int8;algorithm.rolloutCorrection.is=token vs sampo-int8`.
 * KEY=VALUE are `--set` overrides (typed and checked like --set), applied after the study's own --set. Without
 * `vs`, an arm is compared with the first arm listed with the same preset; that first arm is a baseline (compared
 * with nothing). An arms file holds one spec per line; blank lines and lines starting with `#` are skipped.
 */
import { PRESET_NAMES, parseSetArgs } from '../../../core/config/index';
import type { Arm } from './studyFiles';

export type { Arm } from './studyFiles';

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

/** An arm spec's parts, or an Error whose message names the spec, the part and the fix. */
function parseOne(spec: string): { name: string; preset: string; sets: Arm['sets']; vs: string | null } {
  const where = `arm ${JSON.stringify(spec)}`;
  let body = spec.trim();
  let vs: string | null = null;
  const m = /\s+vs\s+(\S+)$/.exec(body);
  if (m) {
    vs = m[1];
    body = body.slice(0, m.index).trim();
  }
  const [head, ...sets] = body
    .split(';')
    .map((s) => s.trim())
    .filter((s, i) => i === 0 || s !== '');
  const eq = head.indexOf('=');
  if (eq <= 0)
    throw new Error(`${where}: expected NAME=PRESET[;KEY=VALUE…][ vs BASELINE], e.g. sampo-int8=sampo;compute.rolloutPrecision=int8`);
  const name = head.slice(0, eq).trim();
  const preset = head.slice(eq + 1).trim();
  if (!NAME_RE.test(name)) throw new Error(`${where}: name ${JSON.stringify(name)}: use 1–40 letters, digits, '.', '_' or '-'`);
  if (!PRESET_NAMES.includes(preset))
    throw new Error(`${where}: unknown preset ${JSON.stringify(preset)}; valid presets: ${PRESET_NAMES.join(', ')}`);
  if (vs !== null && !NAME_RE.test(vs)) throw new Error(`${where}: baseline ${JSON.stringify(vs)} is not an arm name`);
  const { overrides, issues } = parseSetArgs(sets);
  if (issues.length > 0) throw new Error(`${where}: ${issues.map((i) => i.message.replace(/^--set /, '')).join('; ')}`);
  for (const k of ['seed', 'env.name'])
    if (k in overrides) throw new Error(`${where}: ${k} is set by the study for every arm; drop it from the arm`);
  return { name, preset, sets: overrides, vs };
}

/** Arm specs → arms with their baselines resolved; an Error naming the arm and the fix on bad input. */
export function parseArms(specs: readonly string[]): Arm[] {
  if (specs.length === 0) throw new Error('no arms: give at least two, e.g. "fp32=sampo" "int8=sampo;compute.rolloutPrecision=int8"');
  const parsed = specs.map(parseOne);
  const names = new Set<string>();
  for (const a of parsed) {
    if (names.has(a.name)) throw new Error(`arm ${JSON.stringify(a.name)} is named twice; give every arm its own name`);
    names.add(a.name);
  }
  return parsed.map((a) => {
    if (a.vs !== null) {
      if (a.vs === a.name) throw new Error(`arm ${JSON.stringify(a.name)}: "vs ${a.vs}" compares it with itself; name another arm`);
      if (!names.has(a.vs)) throw new Error(`arm ${JSON.stringify(a.name)}: "vs ${a.vs}" names no arm; arms: ${[...names].join(', ')}`);
      return a;
    }
    const first = parsed.find((b) => b.preset === a.preset)!;
    return { ...a, vs: first.name === a.name ? null : first.name };
  });
}

/** The specs of an arms file: one per line, blank lines and `#` comments skipped. */
export function armSpecsOfFile(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** An arm as its spec (what the README and --help print). */
export function armSpec(a: Arm): string {
  const sets = Object.entries(a.sets).map(([k, v]) => `;${k}=${v}`);
  return `${a.name}=${a.preset}${sets.join('')}${a.vs ? ` vs ${a.vs}` : ''}`;
}
