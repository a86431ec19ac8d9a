import { describe, expect, it } from "vitest";
import { signPayload, verifyPayloadSignature } from "./signature.ts";

const secret = "webhook-secret-of-enough-length";
const body = JSON.stringify({ eventId: "e1", requestId: "r1", status: "SUCCEEDED" });

describe("payload signature", () => {
  it("accepts a fresh signature over the exact body", () => {
    expect(
      verifyPayloadSignature(secret, signPayload(secret, body, 1000), body, { nowS: 1010 }),
    ).toBeUndefined();
  });

  it("refuses a missing, malformed, stale, forged or body-changed signature", () => {
    expect(verifyPayloadSignature(secret, undefined, body)).toBe("missing");
    expect(verifyPayloadSignature(secret, "t=abc,v1=00", body)).toBe("malformed");
    expect(verifyPayloadSignature(secret, signPayload(secret, body, 1000), body, { nowS: 1000 + 301 })).toBe(
      "stale",
    );
    // Dated in the future beyond the tolerance is as stale as one from the past.
    expect(verifyPayloadSignature(secret, signPayload(secret, body, 1000 + 301), body, { nowS: 1000 })).toBe(
      "stale",
    );
    expect(
      verifyPayloadSignature(secret, signPayload("other-secret-of-enough-length", body, 1000), body, {
        nowS: 1000,
      }),
    ).toBe("mismatch");
    expect(verifyPayloadSignature(secret, signPayload(secret, body, 1000), `${body} `, { nowS: 1000 })).toBe(
      "mismatch",
    );
  });
});
