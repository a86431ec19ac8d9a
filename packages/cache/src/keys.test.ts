import { describe, expect, it } from "vitest";
import { parseSkuRef, skuRef } from "./keys.ts";

describe("a SKU named in a message or a set member", () => {
  it("is written <activity>:<sku> and read back; anything else names no SKU", () => {
    expect(skuRef(12, 34)).toBe("12:34");
    expect(parseSkuRef(skuRef(12, 34))).toEqual({ activityId: 12, skuId: 34 });
    for (const ref of ["x:34", "12:x", "12", "", "1.5:2"]) expect(parseSkuRef(ref), ref).toBeUndefined();
  });
});
