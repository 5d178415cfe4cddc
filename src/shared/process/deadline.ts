/**
 * Waits for `promise` at most `ms`: past that, answers what `onTimeout` returns, or rejects with what
 * it throws. The work itself is not stopped (a promise cannot be); the caller stops waiting for it.
 *
 * The timer is always cleared, whether the promise settles first or the deadline passes: a timer left
 * running keeps its closure alive for `ms` and, on a worker that races thousands of calls, piles up.
 */
export function withDeadline<T, L = never>(promise: Promise<T>, ms: number, onTimeout: () => L): Promise<T | L> {
  // One promise and one timer, settled by whichever comes first: it runs for every Redis command of a
  // request, where Promise.race and .finally cost four promises more.
  return new Promise<T | L>((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error);
      }
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** The `onTimeout` of a caller that only needs to know it got no answer. */
export function noAnswerWithin(ms: number): never {
  throw new Error(`no answer within ${ms} ms`);
}
