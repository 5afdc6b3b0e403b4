// The full tfjs package registers the cpu backend and every op's gradient (tfjs-core alone has neither).
import * as tf from '@tensorflow/tfjs';
import { ProbeInputError, PROBE_FUNCTIONS, runProbeText } from '../../../core/algorithms/probe';
import {
  ADVANTAGES,
  AGGREGATIONS,
  BYPASS_LOSSES,
  KL_ESTIMATORS,
  POLICY_LOSSES,
  ROLLOUT_IS,
  ROLLOUT_RS,
} from '../../../core/algorithms/index';
import { listPresets } from '../../../core/config/index';
import { UsageError, type CliCommand } from '../types';

/** Every catalog as {family: [{name, summary}]} plus the presets' four dimensions. */
function listCatalogs() {
  const names = (c: { list(): ReadonlyArray<{ name: string; summary: string }> }) =>
    c.list().map(({ name, summary }) => ({ name, summary }));
  return {
    aggregation: names(AGGREGATIONS),
    policyLoss: names(POLICY_LOSSES),
    advantage: names(ADVANTAGES),
    kl: names(KL_ESTIMATORS),
    rolloutIs: names(ROLLOUT_IS),
    rolloutRs: names(ROLLOUT_RS),
    bypassLoss: names(BYPASS_LOSSES),
    presets: listPresets().map(({ name, label, why, recommended, dimensions }) => ({ name, label, recommended, why, dimensions })),
  };
}

const usage = `Usage: arlarena algo < case.json
       arlarena algo --list      the algorithm catalogs and presets (JSON)

Reads ONE probe case from stdin and prints {"outputs": {...}} on stdout, so another implementation of the
paper's algorithms (e.g. the reference's torch code) can be compared number for number.

A case: {"fn": NAME, "params": {...}, "inputs": {...}} with verl's names; matrices are nested lists
[row][token] (logits [row][token][vocab]), masks 0/1. Functions and their params / inputs (? = optional):
${Object.entries(PROBE_FUNCTIONS)
  .map(([fn, s]) => `  ${fn}\n    params: ${s.params.join(', ')}\n    inputs: ${s.inputs.join(', ')}`)
  .join('\n')}

compute_gigpo_outcome_advantage: step_rewards are the reference's precomputed step returns, unless params.gamma
is given — then they are per-step env rewards, discounted within each traj_uid in row order. With
invalid_action_penalty_coef and is_action_valid the probe subtracts λ itself (from the row score and, after
discounting, from the row's own step return), so pass unpenalised rewards then.

rollout_correction (verl compute_rollout_correction_and_rejection_mask) runs in float64 and needs at least one
valid token; rollout_rs_threshold is a number or a string ("0.5_2.0" for k1 options, comma separated per option).
policy_loss_bypass_mode: old_log_prob is the rollout engine's. icepop_function uses slime's names.
See docs/guides/rollout-correction.md.

Loss, KL and entropy run in float32 tfjs (cpu backend) with gradients via tf.grad wrt log_prob / loss_mat /
logits; advantages run in float64. Non-finite outputs print as null. Malformed input: one line on stderr,
exit code 2.`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8');
}

const command: CliCommand = {
  summary: 'JSON probe of the loss / KL / entropy / advantage functions (one case on stdin)',
  usage,
  async run(args, ctx) {
    if (args.length === 1 && args[0] === '--list') {
      ctx.stdout.write(`${JSON.stringify(listCatalogs(), null, 2)}\n`);
      return 0;
    }
    if (args.length > 0)
      throw new UsageError(`algo takes no arguments but --list (got "${args[0]}"); pipe one JSON case on stdin (see arlarena algo --help)`);
    // The cpu backend is exact enough and always present; PROD mode silences tfjs's "install tfjs-node"
    // banner, which would otherwise land on stderr of every probe call.
    tf.enableProdMode();
    await tf.setBackend('cpu');
    const text = await readStdin();
    try {
      ctx.stdout.write(`${JSON.stringify(runProbeText(text))}\n`);
      return 0;
    } catch (e) {
      if (e instanceof ProbeInputError) throw new UsageError(e.message);
      throw e;
    }
  },
};

export default command;
