/** sessions.* — training sessions (src/main/sessions): resolve the config, queue, pause/resume/stop. */
import { resolveConfig } from '../../../core/config/index';
import { err, ok, type Result } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import { SessionError } from '../../sessions/sessionManager';
import type { AreaMethods, Handlers } from '../types';
import { mainSidePath, pathRefusal } from './pathAccess';

async function guard<T>(fn: () => Promise<T>): Promise<Result<T>> {
  try {
    return ok(await fn());
  } catch (e) {
    if (e instanceof SessionError) return err(e.code, e.message, { field: 'runId' });
    throw e;
  }
}

export function createSessionsHandlers(services: LabServices): Handlers<AreaMethods<'sessions'>> {
  const lab = () => services.lab();
  return {
    'sessions.start': async ({ preset, env, overrides, seed, name, tags, on }, ctx) => {
      // On Ray the run keeps its rollout engine (the lab's package carries onnxruntime-node); its backend and K are
      // fixed when the job is submitted (rayTarget.resolveRayCompute).
      const onRay = on !== undefined && on !== 'local';
      const { config, issues } = resolveConfig(preset, env, { ...(overrides ?? {}), ...(seed !== undefined ? { seed } : {}) });
      if (!config) {
        const first = issues[0];
        return err('VALIDATION', issues.map((i) => `${i.field}: ${i.message}`).join('; '), {
          field: first
            ? first.field === 'preset' || first.field === 'env.name'
              ? first.field.replace('env.name', 'env')
              : `overrides.${first.field}`
            : undefined,
        });
      }
      // A Hugging Face folder the config names (model.source hf:PATH) is read on this machine: in browser mode only
      // inside the `serve --allow-dir` folders, as models.inspect and imports.path read (pathAccess.ts).
      const source = config.model.source;
      if (source?.startsWith('hf:')) {
        const p = mainSidePath(source.slice('hf:'.length));
        const refused =
          p === null
            ? err('VALIDATION', `model.source ${JSON.stringify(source)}: give the model folder's absolute path after "hf:"`)
            : await pathRefusal(
                p,
                ctx,
                'model folders',
                'restart with "arlarena serve --allow-dir FOLDER" naming the folder that holds the model',
              );
        if (refused && !refused.ok)
          return err('VALIDATION', `${refused.error.message}; no run was created`, {
            field: 'overrides.model.source',
            hint: refused.error.hint,
          });
      }
      // Run on a Ray cluster: the target `train --on` resolves; an unknown name, an unreachable cluster or a refused
      // token is reported before any run exists. The run's tags say where it trains (and find it again on resume).
      let targetTags: string[] = [];
      if (onRay) {
        const { resolveTarget, runTagsFor } = await import('../../remote/computeTarget');
        const { RemoteError } = await import('../../remote/targets');
        try {
          const target = await resolveTarget(services.dataDir, on);
          await target.preflight();
          targetTags = runTagsFor(target);
        } catch (e) {
          if (e instanceof RemoteError)
            return err(
              /^no remote named|not a URL|over http/.test(e.message) ? 'VALIDATION' : 'UNAVAILABLE',
              `${e.message}; no run was created`,
              { field: 'on' },
            );
          throw e;
        }
      }
      const { sessions } = await lab();
      const plain = structuredClone(config) as unknown as Record<string, unknown>;
      // This machine's backend says nothing about a Ray node's (the CLI's train --on records none either).
      const backend = targetTags.length ? undefined : await services.computeInfo().catch(() => undefined);
      let info;
      try {
        info = await sessions.startNew({
          name,
          tags: targetTags.length ? [...(tags ?? []), ...targetTags] : tags,
          preset: config.preset,
          env: config.env.name,
          seed: config.seed,
          config: plain,
          totalSteps: config.training.steps,
          backend,
        });
      } catch (e) {
        // A forced compute backend this machine lacks is refused before any run exists.
        if (e instanceof SessionError && e.code === 'VALIDATION')
          return err('VALIDATION', e.message, { field: 'overrides.compute.backend' });
        throw e;
      }
      return ok({ runId: info.runId, status: info.status });
    },
    'sessions.pause': async ({ runId }) => guard(async () => (await lab()).sessions.pause(runId)),
    'sessions.resume': async ({ runId }) => guard(async () => (await lab()).sessions.resume(runId)),
    'sessions.stop': async ({ runId }) => guard(async () => (await lab()).sessions.stop(runId)),
    'sessions.list': async () => ok((await lab()).sessions.list()),
  };
}
