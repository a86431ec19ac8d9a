import { describe, expect, it } from "vitest";
import { createSoldOutShortcut } from "./sold-out-shortcut.ts";

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("sold-out shortcut", () => {
  it("rejects locally for the ttl: SOLD_OUT to non-buyers, ALREADY_PURCHASED to a buyer's new key; then expires", async () => {
    const shortcut = createSoldOutShortcut(100, async () => new Map([["42", "key-of-42"]]));
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
    shortcut.soldOut(1, 2);
    await settle();
    const now = Date.now();
    expect(shortcut.answer(1, 2, "7", "k7", now)).toBe("SOLD_OUT");
    expect(shortcut.answer(1, 2, "42", "another-key", now)).toBe("ALREADY_PURCHASED");
    // The buyer's own key takes the full path, which answers with their order.
    expect(shortcut.answer(1, 2, "42", "key-of-42", now)).toBeUndefined();
    expect(shortcut.answer(1, 3, "7", "k7", now)).toBeUndefined();
    expect(shortcut.answer(1, 2, "7", "k7", now + 101)).toBeUndefined();
  });

  it("stays off while MySQL still has units, and looks again soon", async () => {
    let mysqlSoldOut = false;
    const shortcut = createSoldOutShortcut(100, async () =>
      mysqlSoldOut ? new Map([["42", "key-of-42"]]) : null,
    );
    shortcut.soldOut(1, 2);
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
    mysqlSoldOut = true;
    shortcut.soldOut(1, 2); // within the short retry interval: no new look
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();
    const later = Date.now() + 25; // past the retry interval (ttl / 5)
    shortcut.soldOut(1, 2, later);
    await settle();
    expect(shortcut.answer(1, 2, "7", "k7", later)).toBe("SOLD_OUT");
  });

  it("is off with a zero ttl and when loading buyers fails", async () => {
    const off = createSoldOutShortcut(0, async () => new Map());
    off.soldOut(1, 2);
    await settle();
    expect(off.answer(1, 2, "7", "k7")).toBeUndefined();
    const failing = createSoldOutShortcut(100, async () => {
      throw new Error("database down");
    });
    failing.soldOut(1, 2);
    await settle();
    expect(failing.answer(1, 2, "7", "k7")).toBeUndefined();
  });
});
