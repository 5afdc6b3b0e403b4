/**
 * DeepSpeed-Chat step-3 RLHF console logs (README §5): per step
 *   `epoch: 0|step: 12|ppo_ep: 1|act_loss: 0.21|cri_loss: 0.12|unsuper_loss: 0.0`
 *   `average reward score: -0.679`
 *   `|E2E latency=7.99s |Gather latency=0.00s (0.00%) |Generate time=5.26s (65.81%) |…|CurSamplesPerSec=8.01 |…`
 * The reward and timing lines belong to the step line before them. DeepSpeed `[INFO]` lines (fp16 overflow
 * warnings among them) and separators are noise.
 */
import { bump, parseMetricNumber, StepAccumulator } from './steps';
import type { LineParser, SourceMeta, StepSink } from './types';

export function createDeepspeedChatParser(onStep: StepSink): LineParser {
  const skipped: Record<string, number> = {};
  const acc = new StepAccumulator(onStep, skipped);
  const meta: SourceMeta = { framework: 'deepspeed-chat', notes: [] };
  let overflows = 0;

  return {
    format: 'deepspeed-chat',
    skipped,
    meta,
    push(raw: string): void {
      const line = raw.trim();
      if (line.startsWith('epoch:')) {
        const values: Record<string, number> = {};
        let step: number | undefined;
        for (const part of line.split('|')) {
          const colon = part.indexOf(':');
          if (colon < 0) continue;
          const key = part.slice(0, colon).trim();
          const v = parseMetricNumber(part.slice(colon + 1));
          if (v === undefined) continue;
          if (key === 'step') step = v;
          else values[key] = v;
        }
        if (step === undefined || !Number.isInteger(step) || step < 0) {
          bump(skipped, 'epoch line without a step');
          return;
        }
        acc.add(step, values);
        return;
      }
      const pending = acc.pendingStep;
      if (line.startsWith('average reward score:')) {
        const v = parseMetricNumber(line.slice('average reward score:'.length));
        if (v === undefined || Number.isNaN(pending)) {
          bump(skipped, 'reward line without a step before it');
          return;
        }
        acc.add(pending, { 'average reward score': v });
        return;
      }
      if (line.startsWith('|E2E latency=')) {
        if (Number.isNaN(pending)) {
          bump(skipped, 'timing line without a step before it');
          return;
        }
        const values: Record<string, number> = {};
        for (const part of line.split('|')) {
          const eq = part.indexOf('=');
          if (eq < 0) continue;
          // "5.26s (65.81%)" → 5.26: the seconds, not the share.
          const m = /^\s*(-?[\d.]+(?:e[-+]?\d+)?)/i.exec(part.slice(eq + 1));
          if (m) values[part.slice(0, eq).trim()] = Number(m[1]);
        }
        acc.add(pending, values);
        return;
      }
      if (line.includes('OVERFLOW!')) overflows++;
    },
    flushPending: () => acc.flushPending(),
    end(): void {
      acc.flush();
      if (overflows > 0) meta.notes.push(`${overflows} fp16 loss-scale overflow line(s) (DeepSpeed skipped those updates)`);
    },
  };
}
