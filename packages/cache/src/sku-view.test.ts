import { describe, expect, it } from "vitest";
import { type CachedSku, publicState } from "./sku-view.ts";

const sku = (fields: Partial<CachedSku>): CachedSku => ({
  available: 5,
  priceCents: 100,
  currency: "EUR",
  startsMs: 1000,
  endsMs: 2000,
  rebuy: false,
  position: "p",
  liveReservations: 0,
  buyers: 0,
  ...fields,
});

describe("the public state of a SKU", () => {
  it("is NOT_STARTED before the window, ENDED from its end, else OPEN while a unit is not reserved", () => {
    expect(publicState(sku({}), 999)).toBe("NOT_STARTED");
    expect(publicState(sku({}), 1000)).toBe("OPEN");
    expect(publicState(sku({}), 1999)).toBe("OPEN");
    expect(publicState(sku({}), 2000)).toBe("ENDED");
    expect(publicState(sku({ available: 2, liveReservations: 1 }), 1500)).toBe("OPEN");
    expect(publicState(sku({ available: 2, liveReservations: 2 }), 1500)).toBe("SOLD_OUT");
    expect(publicState(sku({ available: 0 }), 1500)).toBe("SOLD_OUT");
  });
});
