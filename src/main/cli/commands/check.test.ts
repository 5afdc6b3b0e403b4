/**
 * `arlarena check RUN` says which rules ran and which were not applicable (the metrics they miss), in text and
 * in --json, for an imported verl log that logs only entropy, grad norm and score.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testCliContext as ctxFor } from '../../testing/testContext';
import check from './check';
import importCommand from './import';
import runs from './runs';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-cli-check-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function importedRun(data: string): Promise<string> {
  let s = '';
  for (let i = 0; i < 30; i++)
    s += `step:${i} - actor/entropy:${(0.6 - i * 0.001).toFixed(4)} - actor/grad_norm:1.${i % 7} - critic/score/mean:0.${10 + i}\n`;
  const p = join(dir, 'train.log');
  await writeFile(p, s);
  const c = ctxFor(data);
  expect(await importCommand.run([p, '--json'], c.ctx)).toBe(0);
  return (JSON.parse(c.out()) as { runIds: string[] }).runIds[0];
}

describe('arlarena check: rule coverage', () => {
  it('prints the rules that ran and each not-applicable rule with the metrics it lacks', async () => {
    const data = join(dir, 'data');
    const id = await importedRun(data);
    const c = ctxFor(data);
    expect(await check.run([id], c.ctx)).toBe(0);
    const text = c.out();
    const ranLine = /rules that ran: (\d+) of (\d+) \(([^)]*)\)/.exec(text);
    expect(ranLine).not.toBeNull();
    const ran = ranLine![3].split(', ');
    expect(ran).toEqual(expect.arrayContaining(['non_finite', 'entropy_shift', 'grad_norm_spike']));
    expect(ran).not.toContain('kl_drift');
    expect(Number(ranLine![1])).toBe(ran.length);
    expect(text).toMatch(/not applicable: kl_drift — the run did not log any of \S+, \S+/);
    expect(text).toMatch(/not applicable: train_inference_mismatch — the run did not log/);
    const na = text.match(/not applicable: /g) ?? [];
    expect(ran.length + na.length).toBe(Number(ranLine![2]));
  });

  it('--json is one object carrying the alerts and the coverage', async () => {
    const data = join(dir, 'data');
    const id = await importedRun(data);
    const c = ctxFor(data);
    expect(await check.run([id, '--json'], c.ctx)).toBe(0);
    const lines = c.out().trim().split('\n');
    expect(lines).toHaveLength(1);
    const r = JSON.parse(lines[0]) as {
      runId: string;
      steps: number;
      alerts: unknown[];
      coverage: { rule: string; applicable: boolean; missing: string[]; needs: string }[];
    };
    expect(r.runId).toBe(id);
    expect(r.steps).toBe(30);
    expect(Array.isArray(r.alerts)).toBe(true);
    const kl = r.coverage.find((x) => x.rule === 'kl_drift')!;
    expect(kl).toMatchObject({ applicable: false, needs: 'any' });
    expect(kl.missing.length).toBeGreaterThan(0);
    expect(r.coverage.find((x) => x.rule === 'entropy_shift')).toMatchObject({ applicable: true, missing: [] });
  });
});

describe('arlarena check --save and runs list', () => {
  it('lists a synthetic run as "not checked" until check --save has read it', async () => {
    const data = join(dir, 'data');
    const synth = ctxFor(data);
    expect(await runs.run(['synth', '--steps', '40', '--shape', 'calm', '--json'], synth.ctx)).toBe(0);
    const id = (JSON.parse(synth.out().trim().split('\n').pop()!) as { runId: string }).runId;
    const alertsCell = async (): Promise<string> => {
      const c = ctxFor(data);
      expect(await runs.run([], c.ctx)).toBe(0);
      const [head, row] = c.out().trim().split('\n');
      return row.slice(head.indexOf('alerts'), head.indexOf('name')).trim();
    };
    expect(await alertsCell()).toBe('not checked');
    const c = ctxFor(data);
    expect(await check.run([id, '--save'], c.ctx)).toBe(0);
    expect(await alertsCell()).toBe('–');
  });

  it('runs synth --check writes the run already read by the detector, with its alerts; --check elsewhere is refused', async () => {
    const data = join(dir, 'data');
    const synth = ctxFor(data);
    expect(await runs.run(['synth', '--steps', '120', '--shape', 'cispo_collapse', '--check', '--json'], synth.ctx)).toBe(0);
    const { runId, alerts } = JSON.parse(synth.out().trim().split('\n').pop()!) as { runId: string; alerts: number };
    expect(alerts).toBeGreaterThan(0);
    const list = ctxFor(data);
    expect(await runs.run(['--json'], list.ctx)).toBe(0);
    const row = list
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; alertCount: number; detectedThrough: number | null })
      .find((r) => r.id === runId)!;
    expect(row).toMatchObject({ alertCount: alerts, detectedThrough: 120 });
    await expect(runs.run(['--check'], ctxFor(data).ctx)).rejects.toThrow(/--check is an option of `arlarena runs synth` only/);
  });
});
