/**
 * The main-side event bus behind `subscribe`: services emit contract events (src/shared/api.ts `apiEvents`),
 * transports subscribe on behalf of a window or a WebSocket.
 *
 * A subscriber may ask for throttling: events then arrive at most once per `throttleMs`, coalesced so nothing
 * a user needs is lost — the latest status per run, all metric records per run concatenated, one
 * `runs.changed` per run id, the latest version of each alert, and every trajectory notice in order.
 * A listener that throws is logged and never disturbs the emitter or other listeners.
 */
import { apiEvents, type ApiEventName, type ApiEventPayload } from '../../shared/api';

export type EventListener<E extends ApiEventName> = (payload: ApiEventPayload<E>) => void;

export interface SubscribeOptions {
  /** Deliver at most once per this many milliseconds (coalescing in between); 0 or absent = immediately. */
  readonly throttleMs?: number;
}

export interface EventBus {
  emit<E extends ApiEventName>(event: E, payload: ApiEventPayload<E>): void;
  subscribe<E extends ApiEventName>(event: E, listener: EventListener<E>, options?: SubscribeOptions): () => void;
  listenerCount(event?: ApiEventName): number;
  /** Drop every subscription and pending timer (shutdown). */
  close(): void;
}

export interface EventBusOptions {
  /** Check each emitted payload against its schema; a bad one is logged and dropped (default: on unless production). */
  readonly validate?: boolean;
  readonly log?: (message: string, error?: unknown) => void;
}

type AnyPayload = ApiEventPayload<ApiEventName>;

/** Merge a buffer of pending payloads into what a throttled subscriber receives. */
export function coalesce<E extends ApiEventName>(event: E, pending: ApiEventPayload<E>[]): ApiEventPayload<E>[] {
  const byKey = <T>(items: T[], key: (t: T) => string, merge: (a: T, b: T) => T): T[] => {
    const map = new Map<string, T>();
    for (const item of items) {
      const k = key(item);
      const prev = map.get(k);
      map.set(k, prev === undefined ? item : merge(prev, item));
    }
    return [...map.values()];
  };
  switch (event) {
    case 'session.status':
      return byKey(
        pending as ApiEventPayload<'session.status'>[],
        (p) => p.runId,
        (_a, b) => b,
      ) as ApiEventPayload<E>[];
    case 'run.metrics':
      return byKey(
        pending as ApiEventPayload<'run.metrics'>[],
        (p) => p.runId,
        (a, b) => ({ runId: a.runId, records: [...a.records, ...b.records] }),
      ) as ApiEventPayload<E>[];
    case 'runs.changed':
      return byKey(
        pending as ApiEventPayload<'runs.changed'>[],
        (p) => String(p.runId),
        (a) => a,
      ) as ApiEventPayload<E>[];
    case 'run.alert':
      return byKey(
        pending as ApiEventPayload<'run.alert'>[],
        (p) => `${p.runId}\u0000${p.alert.id}`,
        (_a, b) => b,
      ) as ApiEventPayload<E>[];
    default:
      return pending;
  }
}

interface Subscription {
  readonly event: ApiEventName;
  readonly listener: (payload: AnyPayload) => void;
  readonly throttleMs: number;
  pending: AnyPayload[];
  lastDelivery: number;
  timer: ReturnType<typeof setTimeout> | null;
  active: boolean;
}

export function createEventBus(options: EventBusOptions = {}): EventBus {
  const validate = options.validate ?? process.env.NODE_ENV !== 'production';
  const log = options.log ?? ((message, error) => console.error(`[events] ${message}`, error ?? ''));
  const subs = new Set<Subscription>();

  const deliver = (sub: Subscription, payloads: AnyPayload[]) => {
    for (const payload of payloads) {
      if (!sub.active) return;
      try {
        sub.listener(payload);
      } catch (e) {
        log(`a ${sub.event} listener threw`, e);
      }
    }
  };

  const flush = (sub: Subscription) => {
    sub.timer = null;
    if (!sub.active || sub.pending.length === 0) return;
    const batch = coalesce(sub.event, sub.pending);
    sub.pending = [];
    sub.lastDelivery = Date.now();
    deliver(sub, batch);
  };

  return {
    emit(event, payload) {
      if (validate) {
        const checked = apiEvents[event].safeParse(payload);
        if (!checked.success) {
          const issue = checked.error.issues[0];
          log(`dropped a ${event} event that breaks the contract at "${issue.path.join('.') || '(payload)'}": ${issue.message}`);
          return;
        }
      }
      for (const sub of [...subs]) {
        if (sub.event !== event || !sub.active) continue;
        if (sub.throttleMs <= 0) {
          deliver(sub, [payload]);
          continue;
        }
        sub.pending.push(payload);
        if (sub.timer) continue;
        const wait = sub.lastDelivery + sub.throttleMs - Date.now();
        if (wait <= 0) flush(sub);
        else sub.timer = setTimeout(() => flush(sub), wait);
      }
    },
    subscribe(event, listener, subOptions = {}) {
      const sub: Subscription = {
        event,
        listener: listener as (payload: AnyPayload) => void,
        throttleMs: Math.max(0, subOptions.throttleMs ?? 0),
        pending: [],
        lastDelivery: 0,
        timer: null,
        active: true,
      };
      subs.add(sub);
      return () => {
        sub.active = false;
        if (sub.timer) clearTimeout(sub.timer);
        subs.delete(sub);
      };
    },
    listenerCount(event) {
      let n = 0;
      for (const sub of subs) if (event === undefined || sub.event === event) n++;
      return n;
    },
    close() {
      for (const sub of subs) {
        sub.active = false;
        if (sub.timer) clearTimeout(sub.timer);
      }
      subs.clear();
    },
  };
}
