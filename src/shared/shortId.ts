/**
 * The id's last 6 characters: the random part of a generated id (runStore's newRunId), which default names
 * also carry, so a run can be told apart from its twins at a glance. Shorter ids are shown whole.
 */
export function shortId(id: string): string {
  return id.length > 6 ? id.slice(-6) : id;
}
