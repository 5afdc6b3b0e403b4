/**
 * `arlarena warmstart --model hf:PATH`: behaviour cloning of the tiny Qwen3-shaped checkpoint Transformers made
 * (tests/support/hfCheckpoints.ts, the `llm` peer venv) with LoRA on sokoban, run in one go and run as 3 steps +
 * --resume: the two end with the same adapter bytes, losses and trained-variable hash (the resume is bit-identical),
 * write a PEFT adapter folder the lab loads back, report format validity before and after on held-out tasks, and a
 * resume with other flags is refused in one line. On tfjs-wasm (single-threaded, deterministic).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hfTestCheckpoints } from '../../../../tests/support/hfCheckpoints';
import { loadHfFolder, loadPeftAdapter } from '../../compute/models/hfFolder';
import warmstart from './warmstart';
import { testCliContext } from '../../testing/testContext';

let work = '';
const cli = () => testCliContext(work);
let model = '';
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'arlarena-llm-warmstart-'));
  model = join(hfTestCheckpoints(), 'qwen3-fp16');
}, 300_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

// History 0: the tiny checkpoint has 512 positions and its small BPE spends ~440 tokens on a Sokoban prompt.
const flags = (out: string): string[] => [
  '--model',
  `hf:${model}`,
  '--env',
  'sokoban',
  '--lora',
  'r=4,alpha=8,dropout=0.1,targets=q_proj+v_proj+o_proj',
  '--steps',
  '6',
  '--batch',
  '2',
  '--lr',
  '1e-2',
  '--history',
  '0',
  '--expert-episodes',
  '2',
  '--episodes',
  '2',
  '--max-new-tokens',
  '24',
  '--checkpoint-every',
  '2',
  '--seed',
  '7',
  '--out',
  out,
  '--set',
  'compute.backend=wasm',
  '--json',
];

describe('arlarena warmstart --model hf:PATH', () => {
  it('resumed after 3 of 6 steps, ends bit-identical to one straight run', async () => {
    const straight = cli();
    expect(await warmstart.run(flags(join(work, 'straight')), straight.ctx)).toBe(0);
    const a = JSON.parse(straight.out());
    expect(a).toMatchObject({ finished: true, stepsDone: 6, resumedFrom: null, weightsDir: join(work, 'straight', 'adapter') });
    expect(a.formatValidity.before).toMatchObject({ tasks: 2 });
    expect(a.formatValidity.after).toMatchObject({ tasks: 2 });
    console.log(
      `loss ${a.finalLoss}; format validity before ${a.formatValidity.before.formatValid}/2, after ${a.formatValidity.after.formatValid}/2`,
    );

    const first = cli();
    expect(await warmstart.run([...flags(join(work, 'resumed')), '--stop-after', '3'], first.ctx)).toBe(0);
    const b1 = JSON.parse(first.out());
    expect(b1).toMatchObject({ finished: false, stepsDone: 3, weightsDir: null });
    expect(existsSync(join(work, 'resumed', 'checkpoint', 'state.json'))).toBe(true);
    expect(existsSync(join(work, 'resumed', 'adapter'))).toBe(false);

    const second = cli();
    expect(await warmstart.run([...flags(join(work, 'resumed')), '--resume'], second.ctx)).toBe(0);
    const b = JSON.parse(second.out());
    expect(b).toMatchObject({ finished: true, stepsDone: 6, resumedFrom: 3 });
    expect(b.weightsSha256).toBe(a.weightsSha256);
    expect(b.finalLoss).toBe(a.finalLoss);
    const rec = (dir: string) => JSON.parse(readFileSync(join(work, dir, 'warmstart.json'), 'utf8'));
    expect(rec('resumed').losses).toEqual(rec('straight').losses);
    expect(rec('resumed').formatValidity).toEqual(rec('straight').formatValidity);
    const adapterBytes = (dir: string) => readFileSync(join(work, dir, 'adapter', 'adapter_model.safetensors'));
    expect(adapterBytes('resumed').equals(adapterBytes('straight'))).toBe(true);

    // The adapter is PEFT's layout, loaded back by the lab's reader with the settings it was trained with.
    const peft = await loadPeftAdapter(join(work, 'straight', 'adapter'));
    expect(peft.settings).toMatchObject({ rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'o_proj'] });
    expect(rec('straight').losses.at(-1)).toBeLessThan(rec('straight').losses[0]);

    // model/ is the folder RL starts from: the base with the trained adapters folded in, a Hugging Face folder the
    // lab reads as any other (same architecture, float32), whose weights differ from the base's.
    expect(a.modelDir).toBe(join(work, 'straight', 'model'));
    const merged = await loadHfFolder(a.modelDir);
    const base = await loadHfFolder(model);
    expect(merged.config.architecture).toBe(base.config.architecture);
    const name = 'model.layers.0.self_attn.q_proj.weight';
    const m = merged.tensors[name];
    const b0 = base.tensors[name];
    expect(m.length).toBe(b0.length);
    expect(m.some((x, i) => Math.abs(x - b0[i]) > 1e-6)).toBe(true);
    // A projection without adapters keeps the base weights (fp16 widened to float32 exactly).
    const k = 'model.layers.0.self_attn.k_proj.weight';
    expect(Array.from(merged.tensors[k])).toEqual(Array.from(base.tensors[k]));
  }, 900_000);

  it('refuses to resume with other flags, and to start over a finished warm start, in one line', async () => {
    const c = cli();
    expect(await warmstart.run([...flags(join(work, 'resumed')), '--resume', '--lr', '5e-3'], c.ctx)).toBe(1);
    expect(c.err().trim().split('\n').at(-1)).toMatch(
      /^warmstart: --resume: the checkpoint was made with another lr \(0\.01, now 0\.005\)/,
    );
    const e = cli();
    expect(await warmstart.run([...flags(join(work, 'resumed')), '--resume', '--steps', '4'], e.ctx)).toBe(1);
    expect(e.err()).toMatch(/--resume: the checkpoint is at step 6, past --steps 4; give --steps 6 or more/);
    const d = cli();
    expect(await warmstart.run(flags(join(work, 'straight')), d.ctx)).toBe(1);
    expect(d.err()).toMatch(/already holds a warm start; pass --resume to continue it, or choose another --out/);
  }, 300_000);
});
