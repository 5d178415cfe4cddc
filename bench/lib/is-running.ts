/** Whether a process of this id is alive (EPERM: alive, another user's): tells a killed run's leftovers. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
