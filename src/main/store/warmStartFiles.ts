/**
 * Warm-start checkpoint directories (`arlarena warmstart` writes them; shipped ones live in
 * resources/warmstart/<env>/): model.json, weights.bin, tokenizer.json (the agent's model format), recipe.json
 * (how it was made), heldout.json (held-out results with intervals and baselines) and manifest.json (SHA-256 of
 * every other file). `shippedWarmStartLoader` is the TrainerDeps.loadWarmStart for presets' default
 * warmStart.source = 'shipped'.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { writeFileAtomic } from './atomic';
import { projectRoot } from '../platform/appInfo';
import type { WarmStartLoader } from '../../core/training/types';

export const WARMSTART_FILES = ['model.json', 'weights.bin', 'tokenizer.json', 'recipe.json', 'heldout.json'] as const;

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export interface Manifest {
  readonly format: 'arlarena-warmstart';
  readonly version: 1;
  readonly files: Record<string, { sha256: string; bytes: number }>;
}

/** Write the files, then manifest.json over them (written last, so a complete manifest means complete files). */
export async function writeWarmStartDir(dir: string, files: Record<string, Uint8Array>): Promise<Manifest> {
  await mkdir(dir, { recursive: true });
  const manifest: Manifest = { format: 'arlarena-warmstart', version: 1, files: {} };
  for (const name of Object.keys(files).sort()) {
    await writeFileAtomic(join(dir, name), files[name]);
    manifest.files[name] = { sha256: sha256(files[name]), bytes: files[name].length };
  }
  await writeFileAtomic(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Read and verify a warm-start directory against its manifest; throws naming the file that does not match. */
export async function readWarmStartDir(
  dir: string,
): Promise<{ files: Record<string, Uint8Array>; manifest: Manifest; recipe: Record<string, unknown> }> {
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  if (manifest.format !== 'arlarena-warmstart') throw new Error(`${dir}/manifest.json: not a warm-start manifest`);
  const files: Record<string, Uint8Array> = {};
  for (const [name, want] of Object.entries(manifest.files)) {
    const data = new Uint8Array(await readFile(join(dir, name)));
    const got = sha256(data);
    if (got !== want.sha256)
      throw new Error(`${dir}/${name}: SHA-256 ${got} does not match the manifest (${want.sha256}); the checkpoint is corrupted`);
    files[name] = data;
  }
  const recipe = JSON.parse(new TextDecoder().decode(files['recipe.json'])) as Record<string, unknown>;
  return { files, manifest, recipe };
}

export function shippedWarmStartRoot(): string {
  return join(projectRoot(), 'resources', 'warmstart');
}

/**
 * Finds a shipped checkpoint for (env, model size, history window) under `root` (every subdirectory whose
 * recipe.json matches); null when none matches, and the trainer then runs behaviour cloning from scratch.
 */
export function shippedWarmStartLoader(root = shippedWarmStartRoot()): WarmStartLoader {
  return async ({ env, modelSize, historyWindow }) => {
    if (!existsSync(root)) return null;
    for (const entry of (await readdir(root, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort()) {
      const dir = join(root, entry);
      if (!existsSync(join(dir, 'manifest.json'))) continue;
      const { files, manifest, recipe } = await readWarmStartDir(dir);
      if (recipe.env !== env || recipe.modelSize !== modelSize || recipe.historyWindow !== historyWindow) continue;
      return { files, ref: `shipped:${entry}@${manifest.files['weights.bin'].sha256.slice(0, 12)}` };
    }
    return null;
  };
}
