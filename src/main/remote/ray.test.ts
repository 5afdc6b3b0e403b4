/**
 * Lab runs on a REAL Ray head (ray[default] from the peer venv, token auth on, 127.0.0.1, stopped by its pid at
 * the end): compute targets (remote add/list/test/remove, wrong or missing token, unreachable address), a tiny
 * run trained on Ray against the same config and seed trained here (identical metrics), Stop mapped to Ray's job
 * stop, a job that fails on the cluster, and the token never leaving its 0600 file. No mock of the Jobs API.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import train from '../cli/commands/train';
import remote from '../cli/commands/remote';
import arena from '../cli/commands/arena';
import resume from '../cli/commands/resume';
import { spawn } from 'node:child_process';
import { RunStore } from '../store/runStore';
import { CHECKPOINTS_DIR, checkpointDirName, RunFiles } from '../store/runFiles';
import { decodeLine } from './lineProtocol';
import type { CheckpointLine, TrajectoryLine } from './transit';
import { TINY, deterministicPart } from '../../../tests/tinyTrainer';
import { freePort, treeRssMb } from '../../../tests/support/ray';
import { rayHeadForFile } from '../testing/rayHead';
import { testCliContext } from '../testing/testContext';
import { machineWorkers } from '../compute/gradPool';
import { followRayJobIntoRun } from './verlFollow';
import { realRun } from '../../../tests/support/realRuns';
import { venvPython } from '../../../tests/support/peers';
import type { Alert } from '../../shared/api';

const TINY_ARGS = Object.entries({ ...TINY, 'compute.workers': 1, 'training.steps': 3, 'training.checkpointEvery': 3 }).flatMap(
  ([k, v]) => ['--set', `${k}=${v}`],
);

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(join(e.parentPath, e.name));
  return out;
}

// The remote every run below goes to, "head" (its own checks are in the first test).
const ray = rayHeadForFile('arl-ray-');

beforeAll(async () => {
  // Measured, not asserted (benchmarks are not timed tests): printed so the test log carries the numbers.
  const { startMs, pid } = ray.head;
  console.log(`[ray] head up in ${startMs} ms, RSS ${(await treeRssMb(pid)).toFixed(0)} MB (pid ${pid})`);
});

describe('compute targets on a real Ray head with token auth', () => {
  it('remote add stores the token 0600 and never prints it; test reports version, nodes, CPUs; remove forgets it', async () => {
    const a = testCliContext(ray.dataDir);
    expect(await remote.run(['add', 'local', ray.head.url], a.ctx)).toBe(1);
    expect(a.err()).toContain('"local" means this machine');
    expect(await remote.run(['add', 'mine', ray.head.url, '--token-file', ray.head.tokenFile], a.ctx)).toBe(0);
    expect(a.out()).toContain('token stored');
    const tok = join(ray.dataDir, 'remote-tokens', 'mine.token');
    expect((await stat(tok)).mode & 0o777).toBe(0o600);
    expect((await stat(join(ray.dataDir, 'remote-tokens'))).mode & 0o777).toBe(0o700);
    expect(await readFile(join(ray.dataDir, 'remotes.json'), 'utf8')).not.toContain(ray.head.token);

    const t = testCliContext(ray.dataDir);
    expect(await remote.run(['test', 'mine', '--json'], t.ctx)).toBe(0);
    const s = JSON.parse(t.out());
    expect(s).toMatchObject({ rayVersion: '2.60.0', nodes: 1, cpus: { total: 2 }, gpus: { total: 0 } });
    expect(s.cpus.free).toBeGreaterThan(0);

    const l = testCliContext(ray.dataDir);
    await remote.run(['list'], l.ctx);
    expect(l.out()).toContain(ray.head.url);
    for (const c of [a, t, l]) expect(c.out() + c.err()).not.toContain(ray.head.token);

    const b = testCliContext(ray.dataDir);
    await remote.run(['add', 'spare', ray.head.url], b.ctx);
    expect(await remote.run(['remove', 'spare'], b.ctx)).toBe(0);
    expect(await remote.run(['remove', 'spare'], b.ctx)).toBe(1);
    expect(b.err()).toContain('no remote named "spare"');
  });

  it('a missing token, a wrong token and an unreachable address each get their own message', async () => {
    const badTok = join(ray.dataDir, 'bad.token');
    await writeFile(badTok, 'not-the-token\n');
    const c = testCliContext(ray.dataDir);
    await remote.run(['add', 'wrongtok', ray.head.url, '--token-file', badTok], c.ctx);
    expect(await remote.run(['test', 'wrongtok'], c.ctx)).toBe(1);
    expect(c.err()).toMatch(/refused the token: it is not this cluster's token/);
    expect(await remote.run(['test', ray.head.url], c.ctx)).toBe(1);
    expect(c.err()).toMatch(/asks for a token \(Ray token auth is on\)/);
    const closed = await freePort();
    expect(await remote.run(['test', `http://127.0.0.1:${closed}`], c.ctx)).toBe(1);
    expect(c.err()).toContain(`cannot reach the Ray dashboard at http://127.0.0.1:${closed}: ECONNREFUSED`);
  });

  it('train --on with a wrong token is refused before any run is created', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arl-ray-bad-'));
    try {
      const badTok = join(dir, 't');
      await writeFile(badTok, 'nope');
      await remote.run(['add', 'bad', ray.head.url, '--token-file', badTok], testCliContext(dir).ctx);
      await expect(train.run(['--preset', 'grpo', '--on', 'bad', '--json', ...TINY_ARGS], testCliContext(dir).ctx)).rejects.toThrow(
        /refused the token/,
      );
      const store = await RunStore.open(dir);
      expect(await store.listRuns()).toHaveLength(0);
      await store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('lab runs as Ray jobs', () => {
  it('train --on stores the same run as the same command here: every row (the step-0 validation too), every non-timing value; onnxruntime rollouts and K fixed at submission; checkpoint and trajectories come back; the token stays in its file', async () => {
    // The command, nothing pinned but the backend: this machine has tfjs-node (native TensorFlow), which
    // cannot travel in the lab's package, so `auto` would train here on it and on the node on tfjs-wasm (K and the
    // rollout engine are left to the defaults: onnxruntime, one gradient worker per core).
    const args = [
      '--preset',
      'sampo',
      '--env',
      'frozenlake',
      '--steps',
      '2',
      '--model',
      'nano',
      '--seed',
      '3',
      '--set',
      'compute.backend=wasm',
      '--set',
      'training.checkpointEvery=2',
      '--json',
    ];
    const onRay = testCliContext(ray.dataDir);
    const t0 = Date.now();
    expect(await train.run([...args, '--on', 'head'], onRay.ctx)).toBe(0);
    const rayRun = JSON.parse(onRay.out());
    console.log(`[ray] 2-step nano run on Ray: ${Date.now() - t0} ms (package build/upload included)`);
    const here = testCliContext(ray.dataDir);
    const t1 = Date.now();
    expect(await train.run(args, here.ctx)).toBe(0);
    console.log(`[ray] the same run here: ${Date.now() - t1} ms`);
    const localRun = JSON.parse(here.out());
    expect(rayRun.status).toBe('completed');
    expect(rayRun.step).toBe(2);

    const store = await RunStore.open(ray.dataDir);
    const a = await new RunFiles(store.runDir(rayRun.runId)).readMetrics();
    const b = await new RunFiles(store.runDir(localRun.runId)).readMetrics();
    expect(b.map((m) => m.step)).toEqual([0, 1, 2]);
    expect(a.map((m) => m.step)).toEqual([0, 1, 2]);
    expect(deterministicPart(a)).toEqual(deterministicPart(b));
    expect(await store.checkpointSteps(rayRun.runId)).toEqual(await store.checkpointSteps(localRun.runId));
    const rec = await store.getRun(rayRun.runId);
    const localRec = await store.getRun(localRun.runId);
    expect(rec?.tags).toContain('on:ray');
    // Both trained on the same engines with the same K, and each run records what it ran.
    expect(rec?.backend).toMatchObject({ training: 'wasm', rollout: 'onnxruntime-cpu', workers: machineWorkers() });
    expect(localRec?.backend).toMatchObject({ training: 'wasm', rollout: 'onnxruntime-cpu', workers: machineWorkers() });

    // The job ran under the run's id: Ray knows it, and it succeeded.
    const client = ray.client;
    expect((await client.jobInfo(rayRun.runId))?.status).toBe('SUCCEEDED');

    // Its files came back verified (transit.ts): the job's log reports a SHA-256 for each checkpoint file and each
    // trajectory, and the checkpoint stored here holds exactly the bytes the node hashed.
    const messages = (await client.jobLogs(rayRun.runId))
      .split('\n')
      .map((l) => decodeLine(l))
      .filter((m) => m !== null);
    const ck = messages.find((m) => m.type === 'checkpoint')!.body as CheckpointLine;
    expect(Object.keys(ck.sha256).length).toBeGreaterThan(0);
    const storedMeta = JSON.parse(
      await readFile(join(store.runDir(rayRun.runId), CHECKPOINTS_DIR, checkpointDirName(ck.step), 'meta.json'), 'utf8'),
    ) as { sha256: Record<string, string> };
    expect(storedMeta.sha256).toEqual(ck.sha256);
    const trajLines = messages.filter((m) => m.type === 'trajectory').map((m) => m.body as TrajectoryLine);
    expect(trajLines.length).toBeGreaterThan(0);
    expect(trajLines.every((t) => /^[0-9a-f]{64}$/.test(t.sha256))).toBe(true);
    await store.close();

    // The token is in its own file and nowhere else in the data directory (run records, streams, checkpoints).
    for (const f of await filesUnder(ray.dataDir)) {
      if (f.includes(join(ray.dataDir, 'remote-tokens'))) continue;
      expect((await readFile(f)).includes(Buffer.from(ray.head.token)), f).toBe(false);
    }
  }, 180_000);

  it('a job that fails on the cluster marks the run failed with the reason', async () => {
    const c = testCliContext(ray.dataDir);
    // Native TensorFlow does not travel in the lab's package (libtensorflow): a run that names it passes here, where
    // setup:tensorflow built tfjs-node, and fails on the node, which has no build of its own (ARLARENA_NATIVE_TF_ROOT).
    const code = await train.run(
      ['--preset', 'grpo', '--on', 'head', '--json', ...TINY_ARGS, '--set', 'compute.backend=tensorflow'],
      c.ctx,
    );
    expect(code).toBe(1);
    const out = JSON.parse(c.out());
    expect(out.status).toBe('failed');
    expect(out.error).toMatch(/failed on Ray.*tensorflow/s);
  }, 120_000);
});

describe('Stop on a Ray run', () => {
  it("Stop maps to Ray's job stop: the run ends stopped with the steps it streamed, the job STOPPED", async () => {
    const store = await RunStore.open(ray.dataDir);
    const { resolveTarget } = await import('./computeTarget');
    const { SessionManager } = await import('../sessions/sessionManager');
    const { tinyConfig } = await import('../../../tests/tinyTrainer');
    const target = await resolveTarget(ray.dataDir, 'head');
    const config = tinyConfig('grpo', { 'training.steps': 200 });
    let firstMetricAt = 0;
    const submittedAt = Date.now();
    const sessions = new SessionManager({
      store,
      concurrency: 1,
      ...(target.spawn ? { spawn: target.spawn } : {}),
      emit: (event) => {
        if (event === 'run.metrics' && firstMetricAt === 0) firstMetricAt = Date.now();
      },
    });
    try {
      const info = await sessions.startNew({
        preset: 'grpo',
        env: 'sokoban',
        seed: 1,
        config: config as unknown as Record<string, unknown>,
        totalSteps: 200,
        appVersion: 'test',
        appCommit: 'test',
      });
      while (firstMetricAt === 0) {
        if (ray.head.status().exited) throw new Error(`the Ray head died: ${ray.head.status().log.slice(-1500)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      console.log(`[ray] submit → first metric in the local store: ${firstMetricAt - submittedAt} ms`);
      // Pause is refused by going on (a Ray job cannot be held between steps), with a line that says why.
      await sessions.pause(info.runId);
      await new Promise((r) => setTimeout(r, 600));
      expect(sessions.list()[0]).toMatchObject({ status: 'running', detail: expect.stringMatching(/cannot pause; Stop ends the job/) });
      await sessions.stop(info.runId);
      expect(await sessions.waitFor(info.runId)).toBe('stopped');
      const rec = await store.getRun(info.runId);
      expect(rec!.step).toBeGreaterThan(0);
      expect(rec!.step).toBeLessThan(200);
      const stored = await new RunFiles(store.runDir(info.runId)).readMetrics();
      expect(stored.map((m) => m.step)).toEqual(Array.from({ length: stored.length }, (_, i) => i + 1));
      const job = await ray.client.jobInfo(info.runId);
      expect(job?.status).toBe('STOPPED');
    } finally {
      await sessions.dispose();
      await store.close();
    }
  }, 120_000);
});

const PLAYBACK = realRun('verl-console/play-verl_verl_qwen2_7b_min.log');
describe('verl hand-off, live follow', () => {
  (PLAYBACK ? it : it.skip)(
    `a Ray job that PLAYS BACK a real verl console log line by line (play-verl qwen2_7b_min, 140 steps) is followed live into a lab run through the verl console parser, the length-runaway warning raised while the job still runs${PLAYBACK ? '' : ' — NOT RUN: ../shared/data/real-runs is absent'}`,
    async () => {
      const client = ray.client;
      // Not verl: a stand-in that prints a real verl log at a few hundred lines a second, as a verl job's driver would.
      const id = 'verl-playback-qwen2-7b-min';
      const play = `import sys, time\nfor i, l in enumerate(open(sys.argv[1], encoding='utf-8', errors='replace')):\n    sys.stdout.write(l); sys.stdout.flush()\n    if i % 40 == 0: time.sleep(0.02)\n`;
      await client.submitJob({ submissionId: id, entrypoint: `python3 -c "$PLAY" ${PLAYBACK}`, runtimeEnv: { env_vars: { PLAY: play } } });
      const store = await RunStore.open(ray.dataDir);
      const raised: Array<{ alert: Alert; jobStatus: string | undefined }> = [];
      try {
        const r = await followRayJobIntoRun(client, store, id, {
          name: 'playback of play-verl qwen2_7b_min',
          onAlert: (_run, alert, kind) => {
            if (kind === 'raised') void client.jobInfo(id).then((j) => raised.push({ alert, jobStatus: j?.status }));
          },
        });
        expect(r.job.status).toBe('SUCCEEDED');
        expect(r.follow.steps).toBe(140);
        const rec = await store.getRun(r.follow.runId);
        expect(rec?.kind).toBe('imported');
        expect(rec?.tags).toContain('on:ray');
        const jump = rec!.alerts.find((a) => a.rule === 'length_runaway' && a.metric === 'response_length/mean');
        expect(jump?.severity).toBe('warning');
        expect(rec!.alerts.filter((a) => a.severity === 'critical')).toEqual([]);
        await new Promise((res) => setTimeout(res, 200));
        const live = raised.find((x) => x.alert.rule === 'length_runaway');
        expect(live?.jobStatus).toBe('RUNNING');
      } finally {
        await store.close();
      }
    },
    120_000,
  );
});

describe('arena --on a Ray cluster', () => {
  it('an arena sweep on the Ray head gives the same results table as the same arena here', async () => {
    const plan = [
      '--envs',
      'sokoban',
      '--presets',
      'grpo,gspo',
      '--baseline',
      'grpo',
      '--seeds',
      '1',
      '--episodes',
      '2',
      '--json',
      ...TINY_ARGS,
      '--steps',
      '2',
    ];
    const summaryOf = (out: string) => {
      const last = JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
      // Wall-clock fields differ between any two runs; everything else is a function of config and seed.
      return JSON.parse(JSON.stringify(last, (k, v) => (/wall|seconds|time|At$|runId|dataDir|command/i.test(k) ? undefined : v)));
    };
    const onRay = testCliContext(ray.dataDir);
    expect(await arena.run([...plan, '--on', 'head'], onRay.ctx)).toBe(0);
    const here = testCliContext(ray.dataDir);
    expect(await arena.run(plan, here.ctx)).toBe(0);
    const a = summaryOf(onRay.out());
    // The table carries the evaluated cells, not only the (identical) plan.
    expect(JSON.stringify(a).length).toBeGreaterThan(JSON.stringify(a.plan).length + 200);
    expect(a).toEqual(summaryOf(here.out()));
    const store = await RunStore.open(ray.dataDir);
    const rayRuns = (await store.listRuns()).filter((r) => r.tags.includes('arena') && r.tags.includes('on:ray'));
    await store.close();
    expect(rayRuns).toHaveLength(2);
  }, 240_000);
});

describe('re-attach after a lab restart', () => {
  it('the lab killed (-9) mid-run on Ray: resume re-attaches to the job that went on, catches up from its log, no step missing or twice, same metrics as an uninterrupted run', async () => {
    const steps = Object.entries({ ...TINY, 'compute.workers': 1, 'training.steps': 16, 'training.checkpointEvery': 4 }).flatMap(
      ([k, v]) => ['--set', `${k}=${v}`],
    );
    const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'arlarena.mjs');
    const child = spawn(
      process.execPath,
      [bin, '--data-dir', ray.dataDir, 'train', '--preset', 'grpo', '--seed', '3', '--on', 'head', ...steps],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const gone = new Promise((r) => child.once('exit', r));
    let runId: string | null = null;
    const store0 = await RunStore.open(ray.dataDir);
    try {
      for (let i = 0; ; i++) {
        runId ??= /run (\S+): grpo/.exec(err)?.[1] ?? null;
        if (runId && (await store0.checkpointSteps(runId)).length > 0) break;
        if (i > 1200) throw new Error(`no checkpoint from the run on Ray within 120 s: ${err}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await store0.close();
    }
    child.kill('SIGKILL');
    await gone;
    const r = testCliContext(ray.dataDir);
    expect(await resume.run([runId!, '--json'], r.ctx)).toBe(0);
    expect(JSON.parse(r.out())).toMatchObject({ runId, status: 'completed', step: 16 });
    expect(r.err()).toContain('trained on ray:head');
    const here = testCliContext(ray.dataDir);
    expect(await train.run(['--preset', 'grpo', '--seed', '3', '--json', ...steps], here.ctx)).toBe(0);
    const store = await RunStore.open(ray.dataDir);
    try {
      const a = await new RunFiles(store.runDir(runId!)).readMetrics();
      const b = await new RunFiles(store.runDir(JSON.parse(here.out()).runId)).readMetrics();
      expect(a.map((m) => m.step)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
      expect(deterministicPart(a)).toEqual(deterministicPart(b));
      // The target is recorded by name and by address (never the token).
      expect((await store.getRun(runId!))?.tags).toEqual(expect.arrayContaining(['on:ray', 'ray:head', `ray-url:${ray.head.url}`]));
    } finally {
      await store.close();
    }
  }, 240_000);
});

describe('remote verl --on', () => {
  it('submits the printed launch as a Ray job as is; here, with no verl on the head, the job fails and the command says so', async () => {
    const c = testCliContext(ray.dataDir);
    // The check runs first, on the cluster (a Ray job in --workdir with --python: the tests' ARLArena-layout config
    // tree and the Hydra peer); it passes, so the launch is submitted and run from that folder on the head (which
    // has no verl, so the job fails).
    const fixture = resolve('tests/fixtures/verl/arlarena-layout');
    const code = await remote.run(
      [
        'verl',
        '--preset',
        'sampo',
        '--env',
        'sokoban',
        '--model',
        'Qwen/Qwen2.5-0.5B-Instruct',
        '--gpus',
        '1',
        '--on',
        'head',
        '--workdir',
        fixture,
        '--python',
        venvPython('hydra'),
      ],
      c.ctx,
    );
    expect(c.out()).toMatch(/# check: all \d+ overrides compose against recipe\/game_agent\/config\/game_\.yaml/);
    expect(code).toBe(1);
    const id = /submitted Ray job (\S+)/.exec(c.err())?.[1];
    expect(id).toBeDefined();
    const job = await ray.client.jobInfo(id!);
    expect(job?.status).toBe('FAILED');
    const printed = c
      .out()
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .join('\n');
    expect(job?.entrypoint).toBe(printed);
    expect(c.err()).toMatch(new RegExp(`Ray job ${id} FAILED`));
  }, 120_000);

  it("a launch the cluster's config refuses is not submitted: the check job reports the unknown keys and the command exits 1", async () => {
    const c = testCliContext(ray.dataDir);
    const fixture = resolve('tests/fixtures/verl/arlarena-layout');
    const before = (await ray.client.listJobs()).length;
    const code = await remote.run(
      [
        'verl',
        '--stack',
        'verl-agent',
        '--env',
        'alfworld',
        '--model',
        'Qwen/Qwen2.5-0.5B-Instruct',
        '--gpus',
        '1',
        '--on',
        'head',
        '--workdir',
        fixture,
        '--python',
        venvPython('hydra'),
        '--config-dir',
        'recipe/world_agent/config',
        '--config-name',
        'alfworld_',
      ],
      c.ctx,
    );
    expect(code).toBe(1);
    expect(c.out()).toContain('# check: unknown key: actor_rollout_ref.actor.use_invalid_action_penalty=True');
    expect(c.err()).toContain('nothing was submitted');
    const jobs = await ray.client.listJobs();
    // Only the check job was added (its id says so); no launch job.
    expect(jobs.length).toBe(before + 1);
    expect(jobs.filter((j) => j.submission_id.startsWith('verl-check-')).length).toBeGreaterThan(0);
  }, 120_000);
});
