import { execFileSync } from 'node:child_process';

/**
 * The commit a checkout's work tree stands on, with `+dirty` when it has uncommitted changes: which
 * code a figure belongs to. Null when `dir` is not a git work tree (or git is missing).
 */
export function gitCommit(dir: string): string | null {
  try {
    const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();
    const commit = git('rev-parse', '--short=12', 'HEAD');
    return git('status', '--porcelain', '--untracked-files=no') === '' ? commit : `${commit}+dirty`;
  } catch {
    return null;
  }
}
