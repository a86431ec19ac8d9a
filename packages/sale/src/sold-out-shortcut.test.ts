import type { SoldOutSnapshot } from "@flashgate/db";
import { describe, expect, it } from "vitest";
import { createSoldOutShortcut } from "./sold-out-shortcut.ts";

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A shortcut on a clock the test moves, counting how often MySQL is asked. */
function shortcutOn(ttlMs: number, buyers: () => Map<string, string> | null, maxActivities?: number) {
  const clock = { ms: 1_000_000 };
  let loads = 0;
  /** The snapshot in use that each load was given (to keep if MySQL's row is unchanged). */
  const known: (SoldOutSnapshot | undefined)[] = [];
  const shortcut = createSoldOutShortcut(
    ttlMs,
    async (_activityId, _skuId, snapshot) => {
      loads += 1;
      known.push(snapshot);
      const current = buyers();
      return current && { version: `v${loads}`, buyers: current };
    },
    { now: () => clock.ms, maxActivities },
  );
  shortcut.listening(true);
  return { shortcut, clock, loads: () => loads, known };
}

describe("sold-out shortcut", () => {
  it("rejects locally for the ttl: SOLD_OUT to non-buyers, ALREADY_PURCHASED to a buyer's new key; then expires", async () => {
    const { shortcut, clock } = shortcutOn(100, () => new Map([["42", "key-of-42"]]));
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
    shortcut.soldOut(1, 2);
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    expect(shortcut.answer(1, 2, "42", "another-key")).toBe("ALREADY_PURCHASED");
    // The buyer's own key takes the full path, which answers with their order.
    expect(shortcut.answer(1, 2, "42", "key-of-42")).toBeUndefined();
    expect(shortcut.answer(1, 3, "7", "k7")).toBeUndefined();
    clock.ms += 101;
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
  });

  it("takes a snapshot in use again in the last quarter of its life, and drops it when units are back", async () => {
    let soldOut = true;
    const { shortcut, clock, loads, known } = shortcutOn(100, () => (soldOut ? new Map() : null));
    shortcut.soldOut(1, 2);
    await settle();
    clock.ms += 70; // 30 ms left: not yet renewed
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    await settle();
    expect(loads()).toBe(1);
    clock.ms += 10; // 20 ms left: renewed while still answering
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    await settle();
    expect(loads()).toBe(2);
    // The renewal was given the snapshot in use, which MySQL keeps if its stock row has not changed.
    expect(known.map((snapshot) => snapshot?.version)).toEqual([undefined, "v1"]);
    clock.ms += 70; // past the first snapshot, 30 ms left of the renewed one
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    await settle();
    expect(loads()).toBe(2);
    soldOut = false; // a restock: the next renewal finds units and the shortcut steps aside
    clock.ms += 10;
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    await settle();
    expect(loads()).toBe(3);
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
  });

  it("keeps a renewed snapshot for at most maxAgeMs since its buyers were read, however often MySQL says it is unchanged", async () => {
    const clock = { ms: 1_000_000 };
    const given: (SoldOutSnapshot | undefined)[] = [];
    // MySQL that always finds the row unchanged: it hands back the snapshot it is given.
    const shortcut = createSoldOutShortcut(
      100,
      async (_activityId, _skuId, known) => {
        given.push(known);
        return known ?? { version: "v", buyers: new Map() };
      },
      { now: () => clock.ms, maxAgeMs: 250 },
    );
    shortcut.listening(true);
    shortcut.soldOut(1, 2);
    await settle();
    for (let step = 0; step < 4; step++) {
      clock.ms += 80; // each time in the last quarter of the snapshot's life: renewed
      expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
      await settle();
    }
    // Read at 0; renewals at 80, 160 and 240 were given it (kept); at 320 it is past its age: read again.
    expect(given.map((known) => known !== undefined)).toEqual([false, true, true, true, false]);
  });

  it("stays off while MySQL still has units, and looks again soon", async () => {
    let mysqlSoldOut = false;
    const { shortcut, clock, loads } = shortcutOn(100, () =>
      mysqlSoldOut ? new Map([["42", "key-of-42"]]) : null,
    );
    shortcut.soldOut(1, 2);
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
    mysqlSoldOut = true;
    shortcut.soldOut(1, 2); // within the short retry interval: no new look
    await settle();
    expect(loads()).toBe(1);
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
    clock.ms += 25; // past the retry interval (ttl / 5)
    shortcut.soldOut(1, 2);
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
  });

  it("is off with a zero ttl and when loading buyers fails", async () => {
    const off = createSoldOutShortcut(0, async () => ({ version: "v", buyers: new Map() }));
    off.listening(true);
    off.soldOut(1, 2);
    await settle();
    expect(off.answer(1, 2, "7", "k7")).toBeUndefined();
    const failing = createSoldOutShortcut(100, async () => {
      throw new Error("database down");
    });
    failing.listening(true);
    failing.soldOut(1, 2);
    await settle();
    expect(failing.answer(1, 2, "7", "k7")).toBeUndefined();
  });

  it("drops a snapshot, and one still loading, when units come back: the buyer of such a unit is never told SOLD_OUT", async () => {
    const { shortcut } = shortcutOn(100, () => new Map([["42", "key-of-42"]]));
    shortcut.soldOut(1, 2);
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    shortcut.unitsBack(1, 2);
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();

    let finish: (snapshot: SoldOutSnapshot) => void = () => {};
    const slow = createSoldOutShortcut(100, () => new Promise((resolve) => (finish = resolve)));
    slow.listening(true);
    slow.soldOut(1, 2);
    slow.unitsBack(1, 2); // while the snapshot is read: user 7 may buy the unit that came back
    finish({ version: "v", buyers: new Map() });
    await settle();
    expect(slow.answer(1, 2, "7", "k7")).toBeUndefined();
  });

  it("keeps nothing while it cannot hear that units came back", async () => {
    const { shortcut } = shortcutOn(100, () => new Map());
    shortcut.soldOut(1, 2);
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    shortcut.listening(false);
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
    shortcut.soldOut(1, 2);
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
  });

  it("loads one SKU once at a time and once per snapshot, at its exact boundaries", async () => {
    const { shortcut, clock, loads, known } = shortcutOn(100, () => new Map());
    shortcut.soldOut(1, 2);
    shortcut.soldOut(1, 2);
    await settle();
    expect(loads()).toBe(1);
    shortcut.soldOut(1, 2); // a snapshot in force: nothing to load
    await settle();
    expect(loads()).toBe(1);
    shortcut.listening(true); // still listening: nothing dropped
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    clock.ms += 75; // a quarter of its life left: not yet the last quarter
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    await settle();
    expect(loads()).toBe(1);
    clock.ms += 25; // its last instant is past
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
    // Redis says sold out again later: the lapsed snapshot goes with the load, to be kept if unchanged.
    clock.ms += 1000;
    shortcut.soldOut(1, 2);
    await settle();
    expect(known).toEqual([undefined, { version: "v1", buyers: new Map() }]);
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
  });

  it("keeps at most maxActivities activities, starting over when full", async () => {
    const { shortcut } = shortcutOn(100, () => new Map(), 1);
    shortcut.soldOut(1, 2);
    await settle();
    shortcut.soldOut(1, 3);
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    expect(shortcut.answer(1, 3, "7", "k7")).toBe("SOLD_OUT");
    shortcut.soldOut(5, 6);
    await settle();
    expect(shortcut.answer(5, 6, "7", "k7")).toBe("SOLD_OUT");
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
  });
});
