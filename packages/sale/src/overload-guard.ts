export class OverloadedError extends Error {
  override name = "OverloadedError";
}

/**
 * Bounds the database transactions one instance runs at once, and how long a request may wait for a
 * slot. The hot row gains nothing from concurrency, so beyond the bound we answer 503 at once instead
 * of queueing a flood in front of MySQL.
 */
export function createOverloadGuard(options: { maxInFlight: number; maxQueue: number; maxWaitMs: number }) {
  let inFlight = 0;
  const queue: { resolve: () => void; timer: NodeJS.Timeout }[] = [];

  const acquire = (): Promise<void> => {
    if (inFlight < options.maxInFlight) {
      inFlight += 1;
      return Promise.resolve();
    }
    if (queue.length >= options.maxQueue)
      return Promise.reject(new OverloadedError("too many database transactions queued"));
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve,
        timer: setTimeout(() => {
          queue.splice(queue.indexOf(waiter), 1);
          reject(new OverloadedError("waited too long for a database slot"));
        }, options.maxWaitMs),
      };
      queue.push(waiter);
    });
  };

  const release = () => {
    const next = queue.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve();
    } else {
      inFlight -= 1;
    }
  };

  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      await acquire();
      try {
        return await work();
      } finally {
        release();
      }
    },
    get inFlight() {
      return inFlight;
    },
    get queued() {
      return queue.length;
    },
  };
}

export type OverloadGuard = ReturnType<typeof createOverloadGuard>;
