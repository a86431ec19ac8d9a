import { describe, expect, it } from "vitest";
import { newOrderId } from "./purchase.ts";

describe("an order's id", () => {
  it("is a UUID of version 7 whose order is the order in which the ids were made, within a millisecond too", () => {
    const ids = Array.from({ length: 5000 }, () => newOrderId());
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // The database compares them as ASCII strings (ascii_bin).
    expect([...ids].sort()).toEqual(ids);
  });

  it("carries the time it was made, and keeps counting up when the clock steps back", () => {
    const later = newOrderId(Date.UTC(2030, 0, 1));
    expect(Number.parseInt(later.slice(0, 8) + later.slice(9, 13), 16)).toBe(Date.UTC(2030, 0, 1));
    const earlier = newOrderId(Date.UTC(2029, 0, 1));
    expect(earlier > later).toBe(true);
  });
});
