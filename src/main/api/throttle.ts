import type { ApiEventName } from '../../shared/api';

/**
 * Default delivery throttle per event for renderer subscriptions (both transports): streams that can fire many
 * times a second are coalesced (see events.ts `coalesce`), rare events go out at once.
 */
export function defaultThrottleMs(event: ApiEventName): number {
  switch (event) {
    case 'run.metrics':
    case 'session.status':
      return 250;
    default:
      return 0;
  }
}
