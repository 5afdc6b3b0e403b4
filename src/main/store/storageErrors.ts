/**
 * A full disk (or quota) under the data folder: recognised wherever a write fails, and said in one line that
 * names the folder, instead of a bare `ENOSPC: no space left on device, write` (or a hang).
 */

/** Whether `e` (or the message a worker sent) is the file system saying there is no room left. */
export function isDiskFull(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return true;
  const text = typeof e === 'string' ? e : e instanceof Error ? e.message : '';
  return /\bENOSPC\b|\bEDQUOT\b|no space left on device/i.test(text);
}

/** The one-line message for a full disk under `dataDir`, saying what was being written. */
export function diskFullMessage(dataDir: string, doing?: string): string {
  return `the disk holding the data folder ${dataDir} is full (no space left on device${doing ? ` while ${doing}` : ''}); free space there or use another --data-dir, then start the run again`;
}
