/** `arlarena reproduce FILE` — rerun a bundle's run and compare the metric streams. */
import { FLOAT_TOLERANCE, reproduceBundle, verdictLabel } from '../../bundles/reproduce';
import { BundleError } from '../../bundles/manifest';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openStore } from './runs';

const USAGE = `Usage: arlarena reproduce FILE [--steps N] [--model-folder PATH] [--json]
  Verifies the bundle, reruns its config and seed as a new run (tagged "reproduction") with the real trainer,
  and compares every deterministic metric (all but perf/* timings):
    bit-identical      equal at every step (expected when the compute backend matches)
    within-tolerance   same within float tolerance: |Δ| ≤ ${FLOAT_TOLERANCE.atol} + ${FLOAT_TOLERANCE.rtol}·|x| at every step (expected across backends)
    within-band        ≥ 90 % of points inside the original's ±5-step band (widened by 10 % of the range, never
                       less than the float tolerance)
    diverged           otherwise
  --steps N   rerun only the first N steps (a quicker check of the prefix)
  --model-folder PATH  a run of a Hugging Face model (--model hf:…): the base model's folder here (default: the
              path the run recorded, if it exists). The bundle carries the model's hashes, not its weights: a folder
              whose config, weight or tokenizer file hashes differently is refused, naming the file
  Exit code: 0 bit-identical, within tolerance or within band, 3 diverged, 1 error.`;

/** ' ×2 workers', ' ×1 worker', or nothing where the record has no K. */
function workers(k: number | null | undefined): string {
  return k ? ` ×${k} worker${k === 1 ? '' : 's'}` : '';
}

const command: CliCommand = {
  summary: 'rerun a bundle and say whether the metrics reproduce',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { steps: { type: 'string' }, 'model-folder': { type: 'string' }, json: { type: 'boolean' } },
    });
    const { values: v, positionals: pos } = parsed;
    if (pos.length !== 1) throw new UsageError('expected exactly one FILE');
    const steps = v.steps === undefined ? undefined : Number(v.steps);
    if (steps !== undefined && (!Number.isInteger(steps) || steps < 1))
      throw new UsageError(`--steps ${v.steps}: expected a positive integer`);
    const store = await openStore(ctx);
    try {
      const r = await reproduceBundle(store, pos[0], {
        steps,
        ...(v['model-folder'] !== undefined ? { modelFolder: v['model-folder'] } : {}),
        onProgress: ctx.isTTY && !v.json ? (s, t) => ctx.stderr.write(`\rrerunning: step ${s}/${t}`) : undefined,
      });
      if (ctx.isTTY && !v.json) ctx.stderr.write('\n');
      if (v.json) {
        ctx.stdout.write(`${JSON.stringify(r)}\n`);
      } else {
        const out = (s: string) => ctx.stdout.write(`${s}\n`);
        const span = r.firstStep === null ? '' : ` ${r.firstStep}–${r.lastStep}`;
        out(`verdict: ${verdictLabel(r)} over ${r.stepsCompared} logged steps${span} (rerun ${r.rerunId}, ${r.rerunStatus})`);
        const expect = r.backendMatches
          ? `same backend: bit-identity expected${r.verdict === 'bit-identical' ? '' : ', and not met'}`
          : 'different or unknown backend (or worker count): the same numbers within float tolerance are the expectation';
        out(
          `backend: original ${r.originalBackend}${workers(r.originalWorkers)}, rerun ${r.rerunBackend}${workers(r.rerunWorkers)} — ${expect}`,
        );
        if (r.error) out(`rerun failed: ${r.error}`);
        const worst = [...r.keys]
          .filter((k) => !k.identical)
          .sort((a, b) => a.inBand - b.inBand || b.maxAbsDiff - a.maxAbsDiff)
          .slice(0, 8);
        for (const k of worst)
          out(`  ${k.key.padEnd(30)} in band ${(k.inBand * 100).toFixed(0)} %, max |Δ| ${Number(k.maxAbsDiff.toPrecision(3))}`);
      }
      return r.error ? 1 : r.verdict === 'diverged' ? 3 : 0;
    } catch (e) {
      if (e instanceof BundleError) {
        ctx.stderr.write(`arlarena reproduce: refused ${pos[0]}: ${e.message}\n`);
        return 1;
      }
      throw e;
    } finally {
      await store.close();
    }
  },
};

export default command;
