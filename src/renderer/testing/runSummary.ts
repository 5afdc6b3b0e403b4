/**
 * Renderer test kit: a runs-table row (RunSummary, the shape runs.list hands the renderer) with plain defaults — a
 * completed sokoban SAMPO run at step 10 of 10, no tags, summary or alerts, named after its id — and the fields a
 * test gives. Only tests import it (lint: eslint.config.js's renderer rules); it stays free of Node like the renderer.
 */
import type { RunSummary } from '../../shared/api';

export function summaryRun(p: Partial<RunSummary> & { id: string }): RunSummary {
  return {
    name: p.id,
    tags: [],
    env: 'sokoban',
    preset: 'sampo',
    seed: 0,
    status: 'completed',
    step: 10,
    totalSteps: 10,
    createdAt: '',
    updatedAt: '',
    summary: {},
    alertCount: 0,
    worstSeverity: null,
    ...p,
  };
}
