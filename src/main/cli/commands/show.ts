/** `arlarena show RUN` — one run: record, key config, latest metrics, alerts, checkpoints; several side by side (showCompare). */
import { join } from 'node:path';
import { metricDef } from '../../../shared/metrics';
import { metricTail } from '../../store/metricTail';
import { METRICS_FILE } from '../../store/runFiles';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openRun } from './runs';
import { MAX_SHOWN_RUNS, showSideBySide } from './showCompare';

const USAGE = `Usage: arlarena show RUN [--json] [--metrics KEY[,KEY…]]
       arlarena show RUN RUN… [--json] [--metrics KEY[,KEY…]]
  RUN: a run id, a unique id prefix, the short id the app shows (the id's last 6 characters), or a unique run name.
  Several RUNs (up to ${MAX_SHOWN_RUNS}): side by side, one column each — status, env, preset, seed, steps, backend,
  alerts, the config values that differ between them, and each metric's latest value.
  --metrics   print these keys' last values (default: a headline set)
  --json      the full run record as JSON; for several runs {"runs": [records], "configDiff": {path: [value per run]},
              "latest": {key: [{step, value} or null per run]}}`;

const HEADLINE = [
  'episode/success_rate',
  'val/success_rate',
  'episode/score_mean',
  'val/score_mean',
  'episode/reward_mean',
  'episode/valid_format_ratio',
  'actor/grad_norm',
  'actor/entropy',
  'actor/pg_clipfrac',
  'actor/ppo_kl',
  'perf/step_s',
];

const command: CliCommand = {
  summary: 'show one run: record, config, latest metrics, alerts, checkpoints; several side by side',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { json: { type: 'boolean' }, metrics: { type: 'string' } },
    });
    const { values: v, positionals: pos } = parsed;
    if (pos.length === 0) throw new UsageError('expected a RUN (or several, to see them side by side)');
    if (pos.length > MAX_SHOWN_RUNS)
      throw new UsageError(`${pos.length} runs: at most ${MAX_SHOWN_RUNS} side by side (Compare in the app takes up to 64)`);
    const keys = v.metrics ? v.metrics.split(',').map((k) => k.trim()) : HEADLINE;
    if (pos.length > 1) return showSideBySide(ctx, pos, keys, v.json === true);
    const found = await openRun(ctx, 'show', pos[0]);
    if (!found) return 1;
    const { store, run } = found;
    const out = (s: string) => ctx.stdout.write(`${s}\n`);
    if (v.json) {
      out(JSON.stringify(run, null, 2));
      return 0;
    }
    // Flush what this process holds, then read the stream's end only: a 10M-row run costs no more than a small one.
    await store.flush(run.id);
    const tail = await metricTail(join(store.runDir(run.id), METRICS_FILE), keys);
    const last = tail.last;
    const ckpts = await store.filesOf(run.id).checkpointSteps();
    const cfg = run.config as Record<string, any>;
    out(`${run.name}`);
    out(`  id        ${run.id}`);
    out(`  status    ${run.status}${run.error ? ` — ${run.error}` : ''}`);
    out(
      `  progress  step ${run.step} of ${run.totalSteps}, ${run.wallSeconds.toFixed(0)} s of training${run.etaSeconds ? `, ~${run.etaSeconds.toFixed(0)} s left` : ''}`,
    );
    out(`  run       env ${run.env}, preset ${run.preset}, seed ${run.seed}, tags ${run.tags.join(', ') || '–'}`);
    if (cfg.algorithm?.policyLoss) {
      out(
        `  method    loss ${cfg.algorithm.policyLoss.mode}, aggregation ${cfg.algorithm.aggregation}, advantage ${cfg.algorithm.advantage?.estimator}, filter ${cfg.algorithm.filter?.enabled ? 'on' : 'off'}, lr ${cfg.optim?.lr}`,
      );
    }
    out(`  app       ${run.appVersion} (${run.appCommit}); backend ${run.backend.training} / ${run.backend.rollout}`);
    if (run.model) {
      const m = run.model;
      const lora = m.lora
        ? `LoRA r=${m.lora.rank} alpha=${m.lora.alpha} dropout=${m.lora.dropout} on ${m.lora.targets.join('+')}`
        : 'full fine-tuning';
      out(`  model     ${m.architecture} from ${m.path}: ${m.params} parameters, ${m.trainableParams} trained (${lora})`);
      for (const [f, h] of Object.entries({ ...m.weights, ...m.tokenizer })) out(`            ${f}  sha256 ${h.slice(0, 16)}…`);
    }
    out(`  created   ${run.createdAt}; started ${run.startedAt ?? '–'}; finished ${run.finishedAt ?? '–'}`);
    out(`  data      ${tail.records} metric records; checkpoints at steps ${ckpts.join(', ') || '–'}; ${store.runDir(run.id)}`);
    const src = run.source;
    if (src) {
      out(
        `  source    ${src.format} (${src.framework}), ${src.bytes} bytes${src.following ? ', being followed' : ''}, imported ${src.importedAt}`,
      );
      src.paths.forEach((p, i) => out(`            ${p}${src.sha256[i] ? `  sha256 ${src.sha256[i].slice(0, 16)}…` : ''}`));
      const skipped = Object.entries(src.skipped);
      if (skipped.length) out(`  skipped   ${skipped.map(([k, n]) => `${n} ${k}`).join(', ')}`);
      const mapped = Object.entries(src.keyMap);
      if (mapped.length) out(`  mapped    ${mapped.map(([cat, from]) => `${from} → ${cat}`).join(', ')}`);
      for (const n of src.notes) out(`  note      ${n}`);
    }
    if (last) {
      // Imported runs hold only the keys their source logged, and not every key every step (validation every
      // N steps): show each key's latest value and the step it is from.
      const latest = tail.latest;
      out(`latest metrics (step ${last.step}):`);
      for (const k of keys) {
        const hit = latest.get(k);
        if (!hit) continue;
        const val = hit.value;
        out(
          `  ${(metricDef(k)?.label ?? k).padEnd(26)} ${Number.isFinite(val) ? Number(val.toPrecision(4)) : String(val)}   (${k}${hit.step !== last.step ? `, step ${hit.step}` : ''})`,
        );
      }
    }
    out(run.alerts.length ? `alerts (${run.alerts.length}):` : 'alerts: none');
    for (const a of run.alerts)
      out(
        `  [${a.severity}] ${a.rule} on ${a.metric}, steps ${a.firstStep}–${a.lastStep}${a.acknowledged ? ' (acknowledged)' : ''}: ${a.message}`,
      );
    await store.close();
    return 0;
  },
};

export default command;
