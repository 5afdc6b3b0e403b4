/**
 * The GPU probes read nvidia-smi's CSV. No GPU and no nvidia-smi exist on the machines this is developed on, so the
 * parsing is checked against a fake nvidia-smi on PATH that prints what the real one prints for these queries
 * (`--query-compute-apps=pid,used_memory --format=csv,noheader,nounits`, `--query-gpu=name,memory.total
 * --format=csv,noheader`). The real tool is exercised by tests/nativeTensorflow.gpu.integration.test.ts on a GPU.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gpuMemoryGb, gpuName } from './tensorflow';

const savedPath = process.env.PATH;
const dirs: string[] = [];
afterEach(() => {
  process.env.PATH = savedPath;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fakeNvidiaSmi(script: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'arl-smi-'));
  dirs.push(dir);
  const file = join(dir, 'nvidia-smi');
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  chmodSync(file, 0o755);
  process.env.PATH = `${dir}${delimiter}${savedPath ?? ''}`;
}

describe('GPU probes against a fake nvidia-smi (mock: no GPU here)', () => {
  it("gpuMemoryGb sums this process's rows (MiB → GB) and is NaN when the process holds none", () => {
    fakeNvidiaSmi(`case "$1" in --query-compute-apps*) printf '111, 2048\\n${process.pid}, 1536\\n${process.pid}, 512\\n' ;; esac`);
    expect(gpuMemoryGb()).toBe(2);
    expect(gpuMemoryGb(111)).toBe(2);
    expect(gpuMemoryGb(999999)).toBeNaN();
  });
  it('gpuName takes the first GPU line; a failing nvidia-smi gives a generic name, a missing one NaN memory', () => {
    fakeNvidiaSmi(`case "$1" in --query-gpu*) printf 'NVIDIA H200, 143771 MiB\\nNVIDIA H200, 143771 MiB\\n' ;; esac`);
    expect(gpuName()).toBe('NVIDIA H200, 143771 MiB');
    fakeNvidiaSmi('exit 9');
    expect(gpuName()).toBe('NVIDIA GPU (nvidia-smi unavailable)');
    process.env.PATH = '/nonexistent';
    expect(gpuMemoryGb()).toBeNaN();
  });
});
