import { parseGtidSet } from "@flashgate/db";
import { describe, expect, it } from "vitest";
import { gtidServer, scanStart } from "./lost-commits.ts";

const oldPrimary = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const newPrimary = "8a94f357-aab4-11df-86ab-c80aa9429562";

describe("where the lost-commit check starts reading a partition back", () => {
  // The new primary received the old one's transactions 1-40 before the old one died.
  const executed = parseGtidSet(`${oldPrimary}:1-40,${newPrimary}:1-3`);

  it("starts at the newest mark of the old primary that the new one holds, past the new primary's own and the lost", () => {
    const marks = [
      `900 ${newPrimary}:3`,
      `850 ${oldPrimary}:44`,
      `800 ${oldPrimary}:41`,
      `700 ${oldPrimary}:38`,
      `600 ${oldPrimary}:30`,
    ];
    expect(scanStart(marks, executed, newPrimary)).toBe(700n);
  });

  it("has no start when no mark is held, or none is left", () => {
    expect(scanStart([`850 ${oldPrimary}:44`, `800 ${oldPrimary}:41`], executed, newPrimary)).toBeUndefined();
    expect(scanStart([`900 ${newPrimary}:3`], executed, newPrimary)).toBeUndefined();
    expect(scanStart([], executed, newPrimary)).toBeUndefined();
  });

  it("reads the server of a MySQL GTID, tagged or not, and none of MariaDB's", () => {
    expect(gtidServer(`${oldPrimary.toUpperCase()}:7`)).toBe(oldPrimary);
    expect(gtidServer(`${oldPrimary}:sale:7`)).toBe(oldPrimary);
    expect(gtidServer("0-1-7")).toBeUndefined();
    expect(gtidServer(undefined)).toBeUndefined();
  });
});
