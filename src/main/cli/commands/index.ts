import type { CliCommand } from '../types';

/**
 * The command registry: name → lazy loader, so `arlarena --help` does not load tfjs or onnxruntime.
 * Add one line per command; keep the list alphabetical.
 */
export const commands: Record<string, () => Promise<{ default: CliCommand }>> = {
  algo: () => import('./algo'),
  envs: () => import('./envs'),
  serve: () => import('./serve'),
  start: () => import('./start'),
};
