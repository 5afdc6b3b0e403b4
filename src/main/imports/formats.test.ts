/**
 * Every format through importLogs from small files of our own (they cover the formats where
 * ../shared/data/real-runs is absent): detection from content — every file here has a name that lies — the
 * step count, a value or two, and for TensorBoard a folder tree written by TensorBoard's own writer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { peerPython } from '../../../tests/support/peers';
import { RunStore } from '../store/runStore';
import { importLogs, SKIP_EMPTY_TB_DIR } from './importLogs';

let dir: string;
let store: RunStore;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-formats-import-'));
  store = await RunStore.open(join(dir, 'data'));
});
afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const ESC = '\x1b';

/** [format, file text]: each written under the misleading name `data.bin`. */
const FIXTURES: Array<[string, string, { runs: number; steps: number[][]; check?: [number, string, number] }]> = [
  [
    'verl-console',
    [
      `${ESC}[36m(TaskRunner pid=7)${ESC}[0m {'algorithm': {'adv_estimator': 'grpo'}, 'data': {'train_files': '/d/countdown/train.parquet'}}`,
      `${ESC}[36m(TaskRunner pid=7)${ESC}[0m step:1 - actor/entropy:np.float64(0.61) - actor/grad_norm:1.5 - critic/score/mean:0.1`,
      'Training Progress:  10%|█         | 1/10 [00:03<00:27]',
      `${ESC}[36m(TaskRunner pid=7)${ESC}[0m step:2 - actor/entropy:0.58 - actor/grad_norm:nan - critic/score/mean:0.2`,
      `${ESC}[36m(TaskRunner pid=7)${ESC}[0m step:3 - actor/entropy:0.55 - actor/grad_norm:1.2 - critic/score/mean:0.3`,
      '',
    ].join('\r\n'),
    { runs: 1, steps: [[1, 2, 3]], check: [1, 'actor/entropy', 0.61] },
  ],
  [
    'verl-jsonl',
    '{"step":1,"data":{"actor/pg_loss":0.1,"actor/grad_norm":2.0}}\n{"step":2,"data":{"actor/pg_loss":null,"actor/grad_norm":2.5}}\n',
    { runs: 1, steps: [[1, 2]], check: [2, 'actor/grad_norm', 2.5] },
  ],
  [
    'jsonl',
    '{"step": 0, "optim/entropy": 0.9, "env/all/reward/total": 0.1}\n{"step": 1, "optim/entropy": NaN, "env/all/reward/total": 0.3}\nnot json\n',
    { runs: 1, steps: [[0, 1]], check: [0, 'actor/entropy', 0.9] },
  ],
  [
    'trl-console',
    "{'loss': 0.01, 'grad_norm': 0.5, 'reward': 0.2, 'epoch': 0.1}\n{'loss': 0.02, 'grad_norm': 0.4, 'reward': 0.3, 'epoch': 0.2}\n",
    { runs: 1, steps: [[1, 2]], check: [2, 'actor/grad_norm', 0.4] },
  ],
  [
    'trainer-state',
    JSON.stringify(
      {
        global_step: 20,
        log_history: [
          { loss: 0.1, grad_norm: 0.3, step: 10 },
          { loss: 0.05, grad_norm: 0.2, step: 20 },
        ],
      },
      null,
      2,
    ),
    { runs: 1, steps: [[10, 20]], check: [20, 'actor/grad_norm', 0.2] },
  ],
  [
    'wandb-csv',
    '"Step","a - actor/entropy","a - actor/entropy__MIN","a - actor/entropy__MAX","b - actor/entropy"\n"1","0.4","0.3","0.5","0.7"\n"2","0.35","","","0.6"\n"3","","","","0.5"\n',
    {
      runs: 2,
      steps: [
        [1, 2],
        [1, 2, 3],
      ],
      check: [3, 'actor/entropy', 0.5],
    },
  ],
  ['csv', 'step,actor/grad_norm,note\n0,1.0,a\n1,1.1,b\n2,1.2,c\n', { runs: 1, steps: [[0, 1, 2]], check: [2, 'actor/grad_norm', 1.2] }],
  [
    'deepspeed-chat',
    'epoch: 0|step: 0|ppo_ep: 1|act_loss: 0.2|cri_loss: 0.1|unsuper_loss: 0.0\naverage reward score: 0.5\nepoch: 0|step: 1|ppo_ep: 1|act_loss: 0.1|cri_loss: 0.1|unsuper_loss: 0.0\naverage reward score: 0.7\n',
    { runs: 1, steps: [[0, 1]], check: [1, 'episode/reward_mean', 0.7] },
  ],
];

describe('importLogs: every format from our own small files', () => {
  it.each(FIXTURES)('%s, detected from content', async (format, text, want) => {
    const sub = join(dir, format);
    await mkdir(sub, { recursive: true });
    const p = join(sub, 'data.bin');
    await writeFile(p, text);
    const r = await importLogs(store, [p]);
    expect(r.format).toBe(format);
    expect(r.runIds).toHaveLength(want.runs);
    const got = await Promise.all(r.runIds.map(async (id) => (await store.readMetrics(id)).map((m) => m.step)));
    expect(got).toEqual(want.steps);
    if (want.check) {
      const [step, key, value] = want.check;
      const last = await store.readMetrics(r.runIds[r.runIds.length - 1]);
      expect(last.find((m) => m.step === step)?.values[key]).toBeCloseTo(value, 6);
    }
  });

  it('verl console: the echoed config names the preset and dataset; the NaN grad norm is stored and alerted', async () => {
    const p = join(dir, 'verl-console', 'data.bin');
    const r = await importLogs(store, [p], { again: true, name: 'countdown grpo', tags: ['x'] });
    const rec = (await store.getRun(r.runIds[0]))!;
    expect(rec).toMatchObject({ name: 'countdown grpo', preset: 'grpo', env: 'countdown', tags: ['x'] });
    expect(Number.isNaN((await store.readMetrics(rec.id))[1].values['actor/grad_norm'])).toBe(true);
    expect(rec.alerts.some((a) => a.rule === 'non_finite' && a.metric === 'actor/grad_norm')).toBe(true);
  });
});

describe("importLogs: a TensorBoard folder tree written by TensorBoard's own writer", () => {
  it('one run per directory with event files (two files in one directory = one run), an aborted launch counted', async () => {
    const root = join(dir, 'tb');
    const ev = (step: number, entries: Array<[string, string, number | string]>) => [step, 1_700_000_000 + step, entries];
    const spec = {
      files: [
        // verl's TensorBoard logger writes its own key names as tags.
        {
          dir: join(root, 'runs', 'seed1'),
          events: [
            ev(1, [
              ['actor/pg_loss', 'simple', 0.5],
              ['actor/grad_norm', 'simple', 1.5],
            ]),
            ev(2, [
              ['actor/pg_loss', 'simple', 0.25],
              ['actor/grad_norm', 'tensor_f32', 1.25],
            ]),
          ],
        },
        // The same run resumed into a second file of the same directory: read after the first.
        // Its first event repeats the first file's last step: dropped and counted (the store keeps steps increasing).
        {
          dir: join(root, 'runs', 'seed1'),
          events: [
            ev(2, [['actor/pg_loss', 'simple', 9]]),
            ev(3, [
              ['actor/pg_loss', 'simple', 0.125],
              ['my/custom', 'simple', 7],
            ]),
            ev(4, [['actor/pg_loss', 'simple', 'nan']]),
          ],
        },
        {
          dir: join(root, 'runs', 'seed2'),
          events: [ev(10, [['critic/rewards/mean', 'simple', 0.25]]), ev(20, [['critic/rewards/mean', 'simple', 0.5]])],
        },
        { dir: join(root, 'runs', 'aborted'), events: [ev(0, [['args', 'text', 'lr=1e-5']])] },
      ],
    };
    const specPath = join(dir, 'tb-spec.json');
    await writeFile(specPath, JSON.stringify(spec));
    const script = resolve(import.meta.dirname, '..', '..', '..', 'tests', 'peers', 'tensorboard_peer.py');
    const written = JSON.parse(execFileSync(peerPython(), [script, 'write', specPath], { encoding: 'utf8' })) as string[];
    expect(written).toHaveLength(4);

    const r = await importLogs(store, [root]);
    expect(r.format).toBe('tensorboard');
    expect(r.runIds).toHaveLength(2);
    expect(r.skipped).toEqual({ [SKIP_EMPTY_TB_DIR]: 1, 'repeated step': 1 });
    const recs = await Promise.all(r.runIds.map((id) => store.getRun(id)));
    expect(recs.map((x) => x!.name)).toEqual(['tb/runs/seed1', 'tb/runs/seed2']);
    const seed1 = await store.readMetrics(r.runIds[0]);
    expect(seed1.map((m) => m.step)).toEqual([1, 2, 3, 4]);
    expect(seed1[1].values).toEqual({ 'actor/pg_loss': 0.25, 'actor/grad_norm': 1.25 });
    expect(seed1[2].values).toEqual({ 'actor/pg_loss': 0.125, 'my/custom': 7 });
    expect(Number.isNaN(seed1[3].values['actor/pg_loss'])).toBe(true);
    expect(recs[0]!.alerts.some((a) => a.rule === 'non_finite')).toBe(true);
    expect(recs[0]!.source!.paths).toHaveLength(2);
    expect(recs[0]!.source!.sha256).toHaveLength(2);
    expect((await store.readMetrics(r.runIds[1])).map((m) => m.values['episode/reward_mean'])).toEqual([0.25, 0.5]);
  });
});
