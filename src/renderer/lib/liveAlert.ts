/**
 * A live `run.alert` event folded into what the page already holds. The detector keeps extending an open alert
 * under the same id, and the session emits the stored copy after each write; a copy written just before the user's
 * acknowledgement can reach the page after the acknowledgement's reply, and replacing the alert with it put the
 * alert back in the open list (e2e ui-alerts, seen in CI). An acknowledgement is never taken back by the detector,
 * so the page keeps it, as the store's merge does (RunStore.upsertAlerts).
 */
import type { Alert } from '../../shared/api';

export function liveAlert(held: Alert | undefined, event: Alert): Alert {
  return held?.acknowledged && !event.acknowledged ? { ...event, acknowledged: true } : event;
}
