/**
 * `bench:ui --profile`: where the page's main-thread time goes up to the Compare view's first render.
 * Reads a Chromium trace (devtools.timeline + the V8 sampling profiler) of one page load and returns
 *  - busyMs, cpuMs: main-thread task time (wall) and thread time (CPU) from navigation to the
 *               `compare-rendered` mark;
 *  - byEvent:   that time split by trace event, self time (script compile, evaluation, layout, paint, GC …);
 *  - byFunction: the sampled JS self time per function (name and source position), and
 *  - cpuprofile: the samples as a .cpuprofile, which Chromium's DevTools (Performance panel) opens.
 */

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  id?: string;
  args?: Record<string, unknown>;
}

interface ProfileNode {
  id: number;
  parent?: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number; scriptId?: number | string; codeType?: string };
}

export interface CpuProfile {
  nodes: { id: number; callFrame: ProfileNode['callFrame']; children: number[]; hitCount: number }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileReport {
  busyMs: number;
  cpuMs: number;
  /** The main thread's longer tasks up to first render: start (ms after navigation), wall and CPU ms, what ran. */
  tasks: { atMs: number; wallMs: number; cpuMs: number; what: string }[];
  renderAtMs: number;
  byEvent: { name: string; ms: number }[];
  byFunction: { name: string; where: string; ms: number }[];
  cpuprofile: CpuProfile;
}

/** Enough for mainThreadToMark: top-level tasks with thread time, and the user-timing marks. */
export const LIGHT_CATEGORIES = ['disabled-by-default-devtools.timeline', 'blink.user_timing'];

export const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'v8',
  'v8.execute',
  'disabled-by-default-v8.cpu_profiler',
  'blink.user_timing',
  'loading',
  'toplevel',
];

/** Self time per event name for the complete (X) events of one thread, nested by time. */
function selfTimes(events: TraceEvent[], end: number): Map<string, number> {
  const xs = events.filter((e) => e.ph === 'X' && e.dur !== undefined && e.ts < end).sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
  const out = new Map<string, number>();
  const stack: { e: TraceEvent; end: number; child: number }[] = [];
  const close = (until: number) => {
    while (stack.length && stack[stack.length - 1].end <= until) {
      const top = stack.pop()!;
      const self = Math.min(top.end, end) - top.e.ts - top.child;
      out.set(top.e.name, (out.get(top.e.name) ?? 0) + self);
      if (stack.length) stack[stack.length - 1].child += Math.min(top.end, end) - top.e.ts;
    }
  };
  for (const e of xs) {
    close(e.ts);
    stack.push({ e, end: e.ts + e.dur!, child: 0 });
  }
  close(Infinity);
  return out;
}

interface PageThread {
  events: TraceEvent[];
  pid: number;
  mainTid: number;
  main: TraceEvent[];
  /** navigation start and the mark, trace clock (µs). */
  t0: number;
  end: number;
}

function pageThread(traceJson: string, mark: string): PageThread {
  const parsed = JSON.parse(traceJson) as { traceEvents: TraceEvent[] } | TraceEvent[];
  const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
  const markEv = events.find((e) => e.name === mark && e.cat.includes('blink.user_timing'));
  if (!markEv) throw new Error(`the trace has no '${mark}' performance mark`);
  const pid = markEv.pid;
  const mainTid = events.find((e) => e.pid === pid && e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')?.tid;
  if (mainTid === undefined) throw new Error('the trace has no CrRendererMain thread for the page');
  const main = events.filter((e) => e.pid === pid && e.tid === mainTid);
  // The page's time origin (navigation start): the mark's own performance.now() time says where it is. The
  // navigationStart event is not always in the page's process (a navigation that changed process).
  const startTime = (markEv.args?.data as { startTime?: number } | undefined)?.startTime;
  const nav = events.find((e) => e.pid === pid && e.name === 'navigationStart') ?? main.find((e) => e.ph === 'X');
  const t0 = typeof startTime === 'number' ? markEv.ts - startTime * 1000 : (nav?.ts ?? 0);
  return { events, pid, mainTid, main, t0, end: markEv.ts };
}

/**
 * The page's main thread from navigation start to the mark: the wall time of its top-level tasks and their
 * thread (CPU) time. A task that straddles either end counts in proportion to its part inside.
 */
function busyToMark(p: PageThread): { wallUs: number; cpuUs: number } {
  let wallUs = 0;
  let cpuUs = 0;
  for (const e of p.main) {
    if (e.ph !== 'X' || e.name !== 'RunTask' || !e.dur || e.ts >= p.end || e.ts + e.dur <= p.t0) continue;
    const inside = Math.min(e.ts + e.dur, p.end) - Math.max(e.ts, p.t0);
    wallUs += inside;
    const tdur = (e as TraceEvent & { tdur?: number }).tdur;
    cpuUs += tdur === undefined ? inside : (tdur * inside) / e.dur;
  }
  return { wallUs, cpuUs };
}

/**
 * Main-thread wall and CPU time from navigation to first render, and the CPU time of the page's dedicated
 * workers over the same span (the chart worker draws there; needs LIGHT_CATEGORIES).
 */
export function mainThreadToMark(traceJson: string, mark = 'compare-rendered'): { wallMs: number; cpuMs: number; workerCpuMs: number } {
  const p = pageThread(traceJson, mark);
  const b = busyToMark(p);
  const workers = new Set(
    p.events
      .filter(
        (e) => e.pid === p.pid && e.ph === 'M' && e.name === 'thread_name' && String(e.args?.name ?? '').startsWith('DedicatedWorker'),
      )
      .map((e) => e.tid),
  );
  const w = busyToMark({ ...p, main: p.events.filter((e) => e.pid === p.pid && workers.has(e.tid)) });
  return { wallMs: b.wallUs / 1000, cpuMs: b.cpuUs / 1000, workerCpuMs: w.cpuUs / 1000 };
}

export function analyzeTrace(traceJson: string, mark = 'compare-rendered'): ProfileReport {
  const page = pageThread(traceJson, mark);
  const { events, pid, mainTid, main, t0, end } = page;
  const { wallUs: busy, cpuUs } = busyToMark(page);
  const tasks: ProfileReport['tasks'] = [];
  const xs = main.filter((e) => e.ph === 'X' && e.dur !== undefined);
  for (const task of xs) {
    if (task.name !== 'RunTask' || task.ts >= end || task.ts + task.dur! <= t0) continue;
    const cpu = (task as TraceEvent & { tdur?: number }).tdur ?? task.dur!;
    if (cpu < 5000) continue;
    // Name a task by its two longest inner events that say something (script, layout, parse, paint, GC …).
    const inner = xs
      .filter(
        (e) =>
          e !== task &&
          e.ts >= task.ts &&
          e.ts + e.dur! <= task.ts + task.dur! &&
          e.dur! >= 1000 &&
          !/RunTask|mojo|SimpleWatcher|Microtask|v8\.callFunction|V8\./.test(e.name),
      )
      .sort((a, b) => b.dur! - a.dur!)
      .slice(0, 2)
      .map((e) => {
        const d = e.args?.data as { url?: string } | undefined;
        return `${e.name}${d?.url ? ` ${d.url.replace(/^.*\//, '')}` : ''} ${(e.dur! / 1000).toFixed(0)}`;
      });
    tasks.push({ atMs: (task.ts - t0) / 1000, wallMs: task.dur! / 1000, cpuMs: cpu / 1000, what: inner.join(', ') || '(native)' });
  }
  const byEvent = [
    ...selfTimes(
      main.filter((e) => e.ts + (e.dur ?? 0) >= t0),
      end,
    ),
  ]
    .map(([name, us]) => ({ name, ms: us / 1000 }))
    .sort((a, b) => b.ms - a.ms);

  // The sampling profiler's chunks for this thread, assembled into one profile.
  const nodes = new Map<number, ProfileNode>();
  const samples: number[] = [];
  const deltas: number[] = [];
  let startTime = 0;
  const profileIds = new Set(events.filter((e) => e.pid === pid && e.tid === mainTid && e.name === 'Profile').map((e) => e.id));
  for (const e of events) {
    if (e.pid !== pid) continue;
    if (e.name === 'Profile' && e.tid === mainTid) startTime = (e.args?.data as { startTime: number }).startTime;
    if (e.name !== 'ProfileChunk' || !profileIds.has(e.id)) continue;
    const data = e.args?.data as { cpuProfile?: { nodes?: ProfileNode[]; samples?: number[] }; timeDeltas?: number[] };
    for (const n of data.cpuProfile?.nodes ?? []) nodes.set(n.id, n);
    samples.push(...(data.cpuProfile?.samples ?? []));
    deltas.push(...(data.timeDeltas ?? []));
  }
  const hits = new Map<number, number>();
  const selfUs = new Map<string, { name: string; where: string; us: number }>();
  let t = startTime;
  const keptSamples: number[] = [];
  const keptDeltas: number[] = [];
  for (let i = 0; i < samples.length; i++) {
    t += deltas[i] ?? 0;
    if (t > end) break;
    keptSamples.push(samples[i]);
    keptDeltas.push(deltas[i] ?? 0);
    hits.set(samples[i], (hits.get(samples[i]) ?? 0) + 1);
    const n = nodes.get(samples[i]);
    // A sample stands for the time until the next one.
    const dt = Math.max(0, deltas[i + 1] ?? 0);
    if (!n || t < t0) continue;
    const cf = n.callFrame;
    if (cf.functionName === '(idle)') continue;
    const where = cf.url ? `${cf.url.replace(/^.*\//, '')}:${cf.lineNumber + 1}:${cf.columnNumber + 1}` : '';
    const key = `${cf.functionName}@${where}`;
    const cur = selfUs.get(key) ?? { name: cf.functionName || '(anonymous)', where, us: 0 };
    cur.us += dt;
    selfUs.set(key, cur);
  }
  const children = new Map<number, number[]>();
  for (const n of nodes.values())
    if (n.parent !== undefined) (children.get(n.parent) ?? children.set(n.parent, []).get(n.parent)!).push(n.id);
  const cpuprofile: CpuProfile = {
    nodes: [...nodes.values()].map((n) => ({
      id: n.id,
      callFrame: n.callFrame,
      children: children.get(n.id) ?? [],
      hitCount: hits.get(n.id) ?? 0,
    })),
    startTime,
    endTime: end,
    samples: keptSamples,
    timeDeltas: keptDeltas,
  };
  return {
    busyMs: busy / 1000,
    cpuMs: cpuUs / 1000,
    tasks,
    renderAtMs: (end - t0) / 1000,
    byEvent,
    byFunction: [...selfUs.values()].map((f) => ({ name: f.name, where: f.where, ms: f.us / 1000 })).sort((a, b) => b.ms - a.ms),
    cpuprofile,
  };
}
