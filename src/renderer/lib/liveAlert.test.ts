import { describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/api';
import { liveAlert } from './liveAlert';

const alert = (over: Partial<Alert>): Alert => ({
  id: 'kl_drift:actor/ppo_kl',
  runId: 'r1',
  rule: 'kl_drift',
  severity: 'warning',
  metric: 'actor/ppo_kl',
  firstStep: 4,
  lastStep: 6,
  message: 'm',
  hint: 'h',
  evidence: { steps: [4, 5, 6], values: [1, 2, 3] },
  acknowledged: false,
  ...over,
});

describe('liveAlert', () => {
  it("takes the event's newer evidence but keeps an acknowledgement the page already holds", () => {
    const held = alert({ acknowledged: true, lastStep: 6 });
    const stale = alert({ acknowledged: false, lastStep: 7, evidence: { steps: [4, 5, 6, 7], values: [1, 2, 3, 4] } });
    const merged = liveAlert(held, stale);
    expect(merged.acknowledged).toBe(true);
    expect(merged.lastStep).toBe(7);
    expect(merged.evidence.steps).toEqual([4, 5, 6, 7]);
  });
  it('passes the event through when nothing was acknowledged here, or the alert is new', () => {
    const event = alert({ lastStep: 9 });
    expect(liveAlert(alert({}), event)).toBe(event);
    expect(liveAlert(undefined, event)).toBe(event);
    const acked = alert({ acknowledged: true });
    expect(liveAlert(alert({}), acked)).toBe(acked);
  });
});
