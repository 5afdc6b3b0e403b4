/** sessions.* — training sessions (src/main/sessions): resolve the config, queue, pause/resume/stop. */
import { resolveConfig } from '../../../core/config/index';
import { err, ok, type Result } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import { SessionError } from '../../sessions/sessionManager';
import type { AreaMethods, CallContext, Handlers } from '../types';
import { mainSidePath, pathRefusal, realPathOf } from './pathAccess';

async function guard<T>(fn: () => Promise<T>): Promise<Result<T>> {
  try {
    return ok(await fn());
  } catch (e) {
    if (e instanceof SessionError) return err(e.code, e.message, { field: 'runId' });
    throw e;
  }
}

/**
 * A Hugging Face folder the config names (model.source hf:PATH) is read on this machine, so it is named as
 * imports.path names a file (namedFile.ts, pathAccess.ts): in browser mode by path, only inside the
 * `serve --allow-dir` folders; in the desktop app only a folder its dialog picked, whose grant comes as
 * `modelGrant` and must name the same folder. Null when the start may go on; else the refusal, before any run exists.
 */
async function hfSourceRefusal(
  source: string | undefined,
  modelGrant: string | undefined,
  ctx: CallContext,
): Promise<Result<never> | null> {
  const hf = source?.startsWith('hf:') === true;
  if (!hf) {
    if (modelGrant === undefined) return null;
    return err('VALIDATION', 'modelGrant names the folder of a Hugging Face run, and this run has no model.source=hf:PATH', {
      field: 'modelGrant',
      hint: 'drop modelGrant, or set model.source to hf: and the picked folder',
    });
  }
  const field = 'overrides.model.source';
  const p = mainSidePath(source!.slice('hf:'.length));
  if (p === null)
    return err(
      'VALIDATION',
      `model.source ${JSON.stringify(source)}: give the model folder's absolute path after "hf:"; no run was created`,
      { field },
    );
  if (!ctx.pathGrants) {
    if (modelGrant !== undefined)
      return err(
        'VALIDATION',
        "modelGrant names a folder picked in the desktop app's dialog; here the folder is named by model.source alone",
        {
          field: 'modelGrant',
          hint: 'drop modelGrant',
        },
      );
    const refused = await pathRefusal(
      p,
      ctx,
      'model folders',
      'restart with "arlarena serve --allow-dir FOLDER" naming the folder that holds the model',
    );
    return refused && !refused.ok
      ? err('VALIDATION', `${refused.error.message}; no run was created`, { field, hint: refused.error.hint })
      : null;
  }
  if (modelGrant === undefined)
    return err(
      'VALIDATION',
      'the desktop app trains a Hugging Face folder only when picked in its folder dialog: pass the grant it answered as modelGrant; no run was created',
      {
        field: 'modelGrant',
        hint: 'imports.pick with purpose "model" opens the dialog',
      },
    );
  const granted = ctx.pathGrants.path(modelGrant);
  if (granted === null)
    return err(
      'VALIDATION',
      `grant "${modelGrant}" was not given by this app's folder dialog (grants last until the app quits); no run was created`,
      {
        field: 'modelGrant',
        hint: 'pick the model folder again',
      },
    );
  if ((await realPathOf(granted)) !== (await realPathOf(p)))
    return err(
      'VALIDATION',
      `model.source names ${JSON.stringify(p)}, but the folder picked in the dialog is ${JSON.stringify(granted)}; no run was created`,
      {
        field,
        hint: 'start the run on the folder that was picked, or pick this one',
      },
    );
  return null;
}

export function createSessionsHandlers(services: LabServices): Handlers<AreaMethods<'sessions'>> {
  const lab = () => services.lab();
  return {
    'sessions.start': async ({ preset, env, overrides, seed, name, tags, on, modelGrant }, ctx) => {
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
      const refused = await hfSourceRefusal(config.model.source, modelGrant, ctx);
      if (refused) return refused;
      // The folder is on this machine's disk, and a Ray job carries the lab, not the weights (as `train --model hf: --on`).
      if (onRay && config.model.source?.startsWith('hf:'))
        return err('VALIDATION', 'a Hugging Face model trains on this machine only: its folder is not on the cluster; no run was created', {
          field: 'on',
          hint: 'choose "This machine" under Run on',
        });
      // The checks `train --model hf:` makes before a run exists (the folder whole and trainable, a chat template, the
      // context, the memory on this machine's backend): the same function, so the same refusal in the same sentence.
      if (config.model.source?.startsWith('hf:')) {
        const { preflightHfRunHere } = await import('../../compute/models/hfRunModel');
        const { HfFolderError } = await import('../../compute/models/hfFolder');
        try {
          await preflightHfRunHere(config, async () => (await services.computeInfo()).training);
        } catch (e) {
          if (e instanceof HfFolderError) return err('VALIDATION', e.message, { field: 'overrides.model.source' });
          throw e;
        }
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
