/**
 * The tokenizer's fitting corpus: the text the policy will read and write on the testbed — prompts and expert
 * responses of expert episodes, plus random-policy episodes (other observations, the invalid-action paths) — for
 * every environment, on training seeds only. Deterministic: same arguments → same vocabulary.
 */
import { createEnv, expertEpisode, randomEpisode, trainSeed, FORMAT_INSTRUCTION } from '../envs';
import { Rng } from '../util/rng';
import { Tokenizer, type FitOptions } from './tokenizer';

export const TESTBED_ENVS = ['sokoban', 'frozenlake', 'household', 'shop'] as const;

export interface CorpusOptions {
  /** Environments to cover (default: all four). */
  envs?: readonly string[];
  /** Expert and random episodes per env (default 40 each). */
  episodesPerEnv?: number;
  /** History window used to build the prompts (default 2, the paper's). */
  historyWindow?: number;
}

export function testbedCorpus(opts: CorpusOptions = {}): string[] {
  const envs = opts.envs ?? TESTBED_ENVS;
  const n = opts.episodesPerEnv ?? 40;
  const k = opts.historyWindow ?? 2;
  const texts: string[] = [FORMAT_INSTRUCTION];
  for (const name of envs) {
    const env = createEnv(name);
    texts.push(env.promptIntro);
    const rng = new Rng(0x70c0 + name.length);
    for (let i = 0; i < n; i++) {
      for (const ep of [expertEpisode(env, trainSeed(i), k), randomEpisode(env, trainSeed(i + 100_000), rng, k)]) {
        for (const t of ep.turns) texts.push(t.prompt, t.response);
      }
    }
  }
  return texts;
}

/** Fit the word/symbol tokenizer to the testbed text. */
export function fitTestbedTokenizer(opts: CorpusOptions & FitOptions = {}): Tokenizer {
  return Tokenizer.fit(testbedCorpus(opts), {
    minCount: opts.minCount ?? 2,
    maxVocab: opts.maxVocab,
    extraPieces: opts.extraPieces,
    version: opts.version,
  });
}
