import { describe, expect, it } from "vitest";
import { createSoldOutShortcut } from "./sold-out-shortcut.ts";

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("sold-out shortcut", () => {
  it("rejects non-buyers locally for the ttl, lets buyers through, and expires", async () => {
    const shortcut = createSoldOutShortcut(100, async () => ["42"]);
    expect(shortcut.rejects(1, 2, "7")).toBe(false);
    shortcut.soldOut(1, 2);
    await settle();
    const now = Date.now();
    expect(shortcut.rejects(1, 2, "7", now)).toBe(true);
    expect(shortcut.rejects(1, 2, "42", now)).toBe(false);
    expect(shortcut.rejects(1, 3, "7", now)).toBe(false);
    expect(shortcut.rejects(1, 2, "7", now + 101)).toBe(false);
  });

  it("is off with a zero ttl and when loading buyers fails", async () => {
    const off = createSoldOutShortcut(0, async () => []);
    off.soldOut(1, 2);
    await settle();
    expect(off.rejects(1, 2, "7")).toBe(false);
    const failing = createSoldOutShortcut(100, async () => {
      throw new Error("redis down");
    });
    failing.soldOut(1, 2);
    await settle();
    expect(failing.rejects(1, 2, "7")).toBe(false);
  });
});
