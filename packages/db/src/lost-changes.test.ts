import { describe, expect, it } from "vitest";
import { holdsGtid, parseGtidSet } from "./lost-changes.ts";

const a = "1bb6bf5d-f01d-11f1-bff0-02fc00000001";
const b = "1EF1B3E2-F01D-11F1-8386-02FC00000001";

describe("GTID sets as MySQL prints them", () => {
  it("holds each number of its intervals, of its own server, and nothing else", () => {
    const set = parseGtidSet(`${a}:1-95:97,\n${b}:1-18`);
    for (const held of [`${a}:1`, `${a}:95`, `${a}:97`, `${b.toLowerCase()}:18`, `${b}:7`])
      expect(holdsGtid(set, held), held).toBe(true);
    for (const missing of [
      `${a}:96`,
      `${a}:98`,
      `${a}:0`,
      `${b}:19`,
      "3e11fa47-71ca-11e1-9e33-c80aa9429562:1",
    ])
      expect(holdsGtid(set, missing), missing).toBe(false);
  });

  it("an empty set holds nothing", () => {
    expect(holdsGtid(parseGtidSet(""), `${a}:1`)).toBe(false);
  });
});
