import { describe, expect, it } from "vitest";
import { isId, isRequestId, parseId } from "./ids.ts";

describe("ids", () => {
  it("accepts positive integers up to 2^53 − 1, written plainly", () => {
    expect(parseId("1")).toBe(1);
    expect(parseId("9007199254740991")).toBe(Number.MAX_SAFE_INTEGER);
    expect(isId("123456789012345")).toBe(true);
  });

  it("refuses zero, signs, leading zeros, fractions, spaces and what JavaScript cannot hold exactly", () => {
    for (const text of [
      "0",
      "-1",
      "+1",
      "01",
      "1.0",
      "1e3",
      " 1",
      "1 ",
      "",
      "9007199254740992",
      "12345678901234567",
    ])
      expect(isId(text), text).toBe(false);
  });

  it("takes an Idempotency-Key of 8 to 64 base64url characters, nothing around it", () => {
    for (const key of ["abcdefgh", "A-_09zZ1", "k".repeat(64)]) expect(isRequestId(key), key).toBe(true);
    for (const key of ["abcdefg", "k".repeat(65), "!abcdefgh", "abcdefgh!", "abcd efgh", "ключключключ", ""])
      expect(isRequestId(key), key).toBe(false);
  });
});
