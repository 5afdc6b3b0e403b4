import type { CliCommand } from '../types';

/**
 * The command registry: name → lazy loader, so `arlarena --help` does not load tfjs or onnxruntime.
 * Add one line per command; keep the list alphabetical.
 */
export const commands: Record<string, () => Promise<{ default: CliCommand }>> = {
  algo: () => import('./algo'),
  arena: () => import('./arena'),
  check: () => import('./check'),
  envs: () => import('./envs'),
  eval: () => import('./eval'),
  export: () => import('./export'),
  follow: () => import('./follow'),
  import: () => import('./import'),
  ladder: () => import('./ladder'),
  llm: () => import('./llm'),
  remote: () => import('./remote'),
  reproduce: () => import('./reproduce'),
  resume: () => import('./resume'),
  runs: () => import('./runs'),
  serve: () => import('./serve'),
  show: () => import('./show'),
  start: () => import('./start'),
  stop: () => import('./stop'),
  train: () => import('./train'),
  warmstart: () => import('./warmstart'),
};
