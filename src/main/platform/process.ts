/** Whether a process id on this machine is alive: signal 0 probes it; EPERM means alive but someone else's. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
