/** alerts.* — collapse alerts stored with each run (raised live by the session workers' detector). */
import type { Alert } from '../../../shared/api';
import { err, ok } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import type { AreaMethods, Handlers } from '../types';

const RANK = { critical: 0, warning: 1, info: 2 } as const;

export function createAlertsHandlers(services: LabServices): Handlers<AreaMethods<'alerts'>> {
  const lab = () => services.lab();
  return {
    'alerts.list': async (input) => {
      const { store } = await lab();
      const ids = input?.runId ? [input.runId] : (await store.listRuns()).map((r) => r.id);
      const out: Alert[] = [];
      for (const id of ids) {
        const rec = await store.getRun(id);
        if (!rec) {
          if (input?.runId) return err('NOT_FOUND', `no run with id "${id}"`, { field: 'runId' });
          continue;
        }
        for (const a of rec.alerts) if (input?.acknowledged === undefined || a.acknowledged === input.acknowledged) out.push(a);
      }
      // Unacknowledged first, then the most severe, then the most recent.
      out.sort((a, b) => Number(a.acknowledged) - Number(b.acknowledged) || RANK[a.severity] - RANK[b.severity] || b.lastStep - a.lastStep);
      return ok(out);
    },
    'alerts.ack': async ({ runId, alertId }) => {
      const { store } = await lab();
      const rec = await store.getRun(runId);
      if (!rec) return err('NOT_FOUND', `no run with id "${runId}"`, { field: 'runId' });
      if (!rec.alerts.some((a) => a.id === alertId))
        return err('NOT_FOUND', `run ${runId} has no alert "${alertId}"`, { field: 'alertId' });
      const next = await store.updateRun(runId, (r) => ({
        alerts: r.alerts.map((a) => (a.id === alertId ? { ...a, acknowledged: true } : a)),
      }));
      const alert = next.alerts.find((a) => a.id === alertId)!;
      services.bus.emit('run.alert', { runId, alert });
      return ok(alert);
    },
  };
}
