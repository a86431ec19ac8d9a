import { describe, expect, it } from "vitest";
import { isSkuFailure } from "./failures.ts";

const reply = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });

describe("isSkuFailure", () => {
  it("takes Redis's replies of a passing condition for transient, whatever the SKU", () => {
    for (const message of [
      "OOM command not allowed when used memory > 'maxmemory'.",
      "READONLY You can't write against a read only replica.",
      "BUSY Redis is busy running a script.",
      "MASTERDOWN Link with MASTER is down",
      "LOADING Redis is loading the dataset in memory",
      "TRYAGAIN Multiple keys request during rehashing of slot",
      "CLUSTERDOWN The cluster is down",
    ])
      expect(isSkuFailure(reply(message)), message).toBe(false);
  });

  it("takes a script error or a wrong key type for one SKU's failure", () => {
    expect(isSkuFailure(reply("WRONGTYPE Operation against a key holding the wrong kind of value"))).toBe(
      true,
    );
    expect(isSkuFailure(reply("ERR user_script:12: Script attempted to access nonexistent global"))).toBe(
      true,
    );
    expect(isSkuFailure(new RangeError("Maximum call stack size exceeded"))).toBe(true);
    expect(isSkuFailure(new TypeError("Cannot read properties of undefined"))).toBe(true);
    expect(isSkuFailure(new Error("something else"))).toBe(false);
  });

  it("takes a lost connection or a database error for the shared dependency's", () => {
    expect(isSkuFailure(new Error("Connection is closed."))).toBe(false);
    expect(isSkuFailure(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBe(
      false,
    );
  });
});
