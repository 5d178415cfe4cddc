import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const driverPath = fileURLToPath(new URL('../../clients/python/tests/live_driver.py', import.meta.url));

interface PythonRetry {
  status: number | null;
  errorCode: number | null;
  delay: number;
  path: string;
}

export interface PythonRun<T> {
  /** The scenario's outcome (the driver's last stdout line), with the retries the client made. */
  outcome: T & { retries: PythonRetry[]; error?: { status: number; errorCode: number | null } };
  stderr: string;
}

interface PythonProcess<T> {
  /** Resolves when the client has logged a line of stderr matching `pattern` (a retry, say). */
  stderrMatches(pattern: RegExp, timeoutMs?: number): Promise<void>;
  done: Promise<PythonRun<T>>;
}

/**
 * Runs clients/python/tests/live_driver.py with `scenario`, its options on stdin: the Python client
 * against a running service, in a process of its own.
 */
export function startPythonScenario<T>(scenario: string, options: unknown, timeoutMs = 120_000): PythonProcess<T> {
  const child = spawn('python3', [driverPath, scenario], {
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const watchers: Array<{ pattern: RegExp; resolve: () => void }> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const watcher of watchers.splice(0)) {
      if (watcher.pattern.exec(stderr) !== null) watcher.resolve();
      else watchers.push(watcher);
    }
  });
  child.stdin.end(JSON.stringify(options));
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<PythonRun<T>>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      if (code !== 0) {
        reject(new Error(`python client exited with ${code}: ${stderr}`));
        return;
      }
      const last = stdout.trimEnd().split('\n').at(-1) ?? '';
      resolve({ outcome: JSON.parse(last), stderr });
    });
  });
  return {
    done,
    stderrMatches: (pattern, waitMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.exec(stderr) !== null) {
          resolve();
          return;
        }
        const timer = setTimeout(() => reject(new Error(`no ${pattern} on the client's stderr: ${stderr}`)), waitMs);
        watchers.push({
          pattern,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
  };
}

export async function runPythonScenario<T>(scenario: string, options: unknown): Promise<PythonRun<T>['outcome']> {
  return (await startPythonScenario<T>(scenario, options).done).outcome;
}
