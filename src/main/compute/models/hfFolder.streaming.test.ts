/**
 * loadHfFolder reads weights tensor by tensor, so reading a model takes bounded memory: no
 * weight file is ever read whole, and no single read asks for more bytes than the largest tensor (or the 16 MiB
 * hashing window), so peak memory is the float32 model plus one tensor, not the file on top of it. The file system
 * calls are counted through a wrapped node:fs/promises.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { byteLevelTokenizerJson, writeHfFolder } from '../../testing/hfFolder';

/** Every read of a *.safetensors file: how many bytes it asked for; and the whole-file reads of one. */
const seen = vi.hoisted(() => ({ reads: [] as Array<{ file: string; bytes: number }>, wholeFile: [] as string[] }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const isWeights = (p: unknown) => String(p).endsWith('.safetensors');
  return {
    ...fs,
    readFile: ((p: Parameters<typeof fs.readFile>[0], ...rest: unknown[]) => {
      if (isWeights(p)) seen.wholeFile.push(String(p));
      return (fs.readFile as (...a: unknown[]) => unknown)(p, ...rest);
    }) as typeof fs.readFile,
    open: (async (p: Parameters<typeof fs.open>[0], ...rest: unknown[]) => {
      const fh = await (fs.open as (...a: unknown[]) => Promise<import('node:fs/promises').FileHandle>)(p, ...rest);
      if (!isWeights(p)) return fh;
      const read = fh.read.bind(fh) as (...a: unknown[]) => unknown;
      return Object.assign(fh, {
        read: (buf: Uint8Array, off: number, len: number, pos: number) => {
          seen.reads.push({ file: basename(String(p)), bytes: len });
          return read(buf, off, len, pos);
        },
      });
    }) as typeof fs.open,
  };
});

const { loadHfFolder } = await import('./hfFolder');

const configJson = {
  architectures: ['LlamaForCausalLM'],
  hidden_size: 64,
  intermediate_size: 160,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 64,
  vocab_size: 300,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: false,
  eos_token_id: 0,
};

const dir = mkdtempSync(join(tmpdir(), 'arlarena-hf-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadHfFolder reads weights tensor by tensor', () => {
  it('never reads a weight file whole, and no read asks for more than its largest tensor', async () => {
    const { weights: list } = writeHfFolder(dir, {
      config: configJson,
      tokenizer: byteLevelTokenizerJson({ vocab: { '<eos>': 0, a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8 }, merges: [] }),
      chatTemplate: '{{ messages[0].content }}',
    });
    const fileBytes = statSync(join(dir, 'model.safetensors')).size;
    const largest = Math.max(...list.map((x) => 4 * x.data.length));

    const loaded = await loadHfFolder(dir);
    expect(Object.keys(loaded.tensors).sort()).toEqual(list.map((x) => x.name).sort());
    for (const x of list) expect(loaded.tensors[x.name], x.name).toEqual(x.data);

    expect(seen.wholeFile).toEqual([]);
    const reads = seen.reads.filter((r) => r.file === 'model.safetensors');
    // At least one read per tensor; together they cover the file (hashed as it is read), none of them all of it.
    expect(reads.length).toBeGreaterThanOrEqual(list.length);
    expect(Math.max(...reads.map((r) => r.bytes))).toBe(largest);
    expect(largest).toBeLessThan(fileBytes / 4);
  });
});
