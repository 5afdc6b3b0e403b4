/**
 * runs.* — the run database (src/main/store), stored-run collapse checks (src/core/stability) and the random /
 * expert / warm-start baselines a run's validation success is read against (./runBaselines.ts).
 */
import { err, ok } from '../../../shared/result';
import { ruleCoverage } from '../../../core/stability/coverage';
import type { RunRecord } from '../../../shared/api';
import type { LabServices } from '../../app/lab';
import { toSummary } from '../../store/runStore';
import { detectStored } from '../../store/detectStored';
import type { AreaMethods, Handlers } from '../types';
import { createRunBaselines } from './runBaselines';
import { chartCsv, csvFileName } from '../../store/chartCsv';
import { axisKeys } from '../../store/axisKeys';

export function createRunsHandlers(services: LabServices): Handlers<AreaMethods<'runs'>> {
  const lab = () => services.lab();
  const notFound = (id: string) => err('NOT_FOUND', `no run with id "${id}"`, { field: 'runId' });
  const runBaselines = createRunBaselines();
  return {
    'runs.list': async (input) => ok(await (await lab()).store.listRuns(input ?? {})),
    'runs.get': async ({ runId }) => {
      const rec = await (await lab()).store.getRun(runId);
      return rec ? ok(rec) : notFound(runId);
    },
    'runs.getMany': async ({ runIds }) => {
      const { store } = await lab();
      const recs = await Promise.all(runIds.map((id) => store.getRun(id)));
      return ok({ runs: recs.filter((r): r is RunRecord => r !== undefined), missing: runIds.filter((_, i) => !recs[i]) });
    },
    'runs.rename': async ({ runId, name }) => {
      const { store } = await lab();
      if (!(await store.getRun(runId))) return notFound(runId);
      const rec = await store.updateRun(runId, { name });
      services.bus.emit('runs.changed', { runId });
      return ok(toSummary(rec));
    },
    'runs.tag': async ({ runId, tags }) => {
      const { store } = await lab();
      if (!(await store.getRun(runId))) return notFound(runId);
      const rec = await store.updateRun(runId, { tags: [...new Set(tags)] });
      services.bus.emit('runs.changed', { runId });
      return ok(toSummary(rec));
    },
    'runs.note': async ({ runId, notes }) => {
      const { store } = await lab();
      if (!(await store.getRun(runId))) return notFound(runId);
      const text = notes.trim();
      const rec = await store.updateRun(runId, { notes: text === '' ? undefined : text });
      services.bus.emit('runs.changed', { runId });
      return ok(toSummary(rec));
    },
    'runs.delete': async ({ runId }) => {
      const { store, sessions } = await lab();
      if (sessions.list().some((s) => s.runId === runId)) {
        return err('CONFLICT', `run ${runId} is active`, { field: 'runId', hint: 'stop the run first, then delete it' });
      }
      if ((await services.follows()).isFollowed(runId)) {
        return err('CONFLICT', `run ${runId} is being followed (live import of a log)`, {
          field: 'runId',
          hint: 'stop following it (follow.stop), then delete it',
        });
      }
      const deleted = await store.deleteRun(runId);
      if (deleted) services.bus.emit('runs.changed', { runId });
      return ok({ deleted });
    },
    'runs.metrics': async ({ runIds, keys, xAxis, xKey, maxPoints }) => {
      const { store } = await lab();
      const out = [];
      for (const id of runIds) {
        if (!(await store.getRun(id))) return notFound(id);
        for (const key of keys) out.push(await store.series(id, key, { xAxis, ...(xKey ? { xKey } : {}), maxPoints }));
      }
      return ok(out);
    },
    'runs.chartCsv': async ({ runIds, key }) => {
      const { store } = await lab();
      const runs = [];
      for (const id of runIds) {
        const rec = await store.getRun(id);
        if (!rec) return notFound(id);
        runs.push({ id, name: rec.name, series: await store.series(id, key) });
      }
      if (runs.every((r) => r.series.totalPoints === 0)) {
        return err(
          'NOT_FOUND',
          `no point of "${key}" in ${runIds.length === 1 ? `run ${runIds[0]}` : `any of the ${runIds.length} runs`}`,
          { field: 'key', hint: 'pick a metric the runs logged (runs.metricKeys lists them)' },
        );
      }
      const { csv, rows } = chartCsv(key, runs);
      return ok({ fileName: csvFileName(key, runs.length === 1 ? runs[0].name : 'compare'), csv, rows });
    },
    'runs.metricKeys': async ({ runId }) => {
      const { store } = await lab();
      if (!(await store.getRun(runId))) return notFound(runId);
      return ok(await store.metricKeys(runId));
    },
    'runs.axisKeys': async ({ runIds }) => {
      const { store } = await lab();
      const known = (await Promise.all(runIds.map(async (id) => ((await store.getRun(id)) ? id : null)))).filter((id) => id !== null);
      return ok(axisKeys(await Promise.all(known.map((id) => store.readMetrics(id)))));
    },
    'runs.trajectories': async ({ runId, step, limit }) => {
      const { store } = await lab();
      if (!(await store.getRun(runId))) return notFound(runId);
      return ok(await store.trajectories(runId, { step, limit }));
    },
    'runs.check': async ({ runId }) => {
      const { store } = await lab();
      const rec = await store.getRun(runId);
      if (!rec) return notFound(runId);
      const acked = new Set(rec.alerts.filter((a) => a.acknowledged).map((a) => a.id));
      const alerts = (await detectStored(store, rec)).alerts.map((a) => ({ ...a, acknowledged: acked.has(a.id) }));
      return ok(alerts);
    },
    'runs.detect': async ({ runId, save, coverageOnly }) => {
      const { store } = await lab();
      const rec = await store.getRun(runId);
      if (!rec) return notFound(runId);
      if (save && coverageOnly)
        return err('VALIDATION', 'save and coverageOnly together: coverageOnly runs no detection, so there is nothing to save', {
          field: 'coverageOnly',
          hint: 'pass one of them',
        });
      // Every key the run logged counts, even one whose every value is NaN: the non-finite rule reads it.
      const coverage = ruleCoverage(await store.metricKeys(runId)).map((c) => ({
        rule: c.rule,
        title: c.title,
        applicable: c.applicable,
        missing: c.missing,
        needs: c.needs,
      }));
      if (coverageOnly) return ok({ alerts: [], coverage, saved: false });
      // With save as `arlarena check --save`: merged by alert id, an acknowledgement already given is kept.
      const { alerts: found, record: next } = await detectStored(store, rec, { save });
      if (!save) {
        const acked = new Set(rec.alerts.filter((a) => a.acknowledged).map((a) => a.id));
        return ok({ alerts: found.map((a) => ({ ...a, acknowledged: acked.has(a.id) })), coverage, saved: false });
      }
      const ids = new Set(found.map((a) => a.id));
      const alerts = next.alerts.filter((a) => ids.has(a.id));
      for (const alert of alerts) services.bus.emit('run.alert', { runId, alert });
      services.bus.emit('runs.changed', { runId });
      return ok({ alerts, coverage, saved: true });
    },
    'runs.baselines': async ({ runId }) => {
      const rec = await (await lab()).store.getRun(runId);
      return rec ? runBaselines(rec) : notFound(runId);
    },
  };
}
