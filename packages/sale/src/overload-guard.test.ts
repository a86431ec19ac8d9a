import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createOverloadGuard, OverloadedError } from "./overload-guard.ts";

describe("overload guard", () => {
  it("runs at most maxInFlight at once and queues the next ones", async () => {
    const guard = createOverloadGuard({ maxInFlight: 2, maxQueue: 10, maxWaitMs: 1000 });
    let running = 0;
    let peak = 0;
    const work = async () => {
      running += 1;
      peak = Math.max(peak, running);
      await sleep(5);
      running -= 1;
    };
    await Promise.all(Array.from({ length: 8 }, () => guard.run(work)));
    expect(peak).toBe(2);
    expect(guard.inFlight).toBe(0);
  });

  it("refuses at once beyond the queue bound and after the wait bound", async () => {
    const guard = createOverloadGuard({ maxInFlight: 1, maxQueue: 1, maxWaitMs: 20 });
    const blocker = guard.run(() => sleep(100));
    const waiting = guard.run(async () => "late");
    await expect(guard.run(async () => "third")).rejects.toBeInstanceOf(OverloadedError);
    await expect(waiting).rejects.toThrow(/waited too long/);
    await blocker;
    expect(await guard.run(async () => "free again")).toBe("free again");
  });
});
