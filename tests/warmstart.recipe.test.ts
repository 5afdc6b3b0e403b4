/**
 * `arlarena warmstart` end to end on a tiny budget: rerunning the recipe on the same backend reproduces the
 * checkpoint's bytes (weights.bin, model.json, tokenizer.json — the manifest's SHA-256), a budget-stopped run is
 * reproduced by the `--stop-after` command recorded in recipe.json, and the directory verifies against its
 * manifest (a flipped byte is refused, naming the file).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliContext } from '../src/main/cli/types';
import warmstart from '../src/main/cli/commands/warmstart';
import { readWarmStartDir, type Manifest } from '../src/main/store/warmStartFiles';

function ctx(): CliContext {
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  return { dataDir: '/nonexistent', stdout: sink, stderr: sink, isTTY: false };
}

const TINY_ARGS = [
  '--env',
  'sokoban',
  '--model',
  'custom',
  '--history',
  '0',
  '--batch',
  '4',
  '--episodes',
  '2',
  '--seed',
  '3',
  '--set',
  'model.dModel=16',
  '--set',
  'model.nLayers=1',
  '--set',
  'model.nHeads=2',
  '--set',
  'model.dFF=32',
  '--set',
  'model.maxSeqLen=160',
  '--set',
  'env.maxSteps=2',
  '--set',
  'rollout.maxResponseTokens=20',
  '--set',
  'warmStart.bcLr=0.005',
  '--set',
  'optim.miniBatchRows=8',
  '--set',
  'compute.backend=wasm',
  '--json',
];

async function recipe(out: string, extra: string[]): Promise<Manifest> {
  expect(await warmstart.run([...TINY_ARGS, ...extra, '--out', out], ctx())).toBe(0);
  return JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;
}

describe('warm-start recipe (arlarena warmstart)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'arlarena-ws-'));

  it('reproduces the checkpoint hash on rerun, and a budget stop through its recorded --stop-after', async () => {
    const a = await recipe(join(dir, 'a'), ['--updates', '6', '--stop-after', '3']);
    const b = await recipe(join(dir, 'b'), ['--updates', '6', '--stop-after', '3']);
    for (const f of ['weights.bin', 'model.json', 'tokenizer.json']) expect(b.files[f].sha256).toBe(a.files[f].sha256);
    const rec = JSON.parse(readFileSync(join(dir, 'a', 'recipe.json'), 'utf8')) as Record<string, unknown>;
    expect(rec.bcUpdates).toBe(6);
    expect(rec.bcUpdatesDone).toBe(3);
    expect(String(rec.reproduce)).toContain('--stop-after 3');
    // The GELU arithmetic is part of the recipe (model.geluForm), so a later default cannot change what it reproduces.
    expect(String(rec.reproduce)).toContain('--set model.geluForm=sigmoid');
    expect((rec.model as { geluForm?: string }).geluForm).toBe('sigmoid');
    // A different budget gives different weights (the hash is not insensitive to the recipe).
    const c = await recipe(join(dir, 'c'), ['--updates', '6']);
    expect(c.files['weights.bin'].sha256).not.toBe(a.files['weights.bin'].sha256);
    const held = JSON.parse(readFileSync(join(dir, 'a', 'heldout.json'), 'utf8')) as {
      greedy: { success: { n: number } };
      random: unknown;
      expert: unknown;
    };
    expect(held.greedy.success.n).toBe(2);
    expect(held.random).toBeDefined();
    expect(held.expert).toBeDefined();
  }, 240_000);

  it('verifies against the manifest and names a corrupted file', async () => {
    const d = join(dir, 'a');
    await expect(readWarmStartDir(d)).resolves.toBeDefined();
    const p = join(d, 'weights.bin');
    const bytes = readFileSync(p);
    bytes[7] ^= 0xff;
    writeFileSync(p, bytes);
    await expect(readWarmStartDir(d)).rejects.toThrow(/weights\.bin: SHA-256 .* does not match the manifest/);
  });
});
