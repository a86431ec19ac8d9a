import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readSignatureHeader, signPayload, verifyPayloadSignature } from "./signature.ts";

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

  it("signs and checks against the clock by default", () => {
    expect(verifyPayloadSignature(secret, signPayload(secret, body), body)).toBeUndefined();
  });

  it("takes a timestamp of digits only and a MAC of exactly 64 hex digits, and a signature exactly at the tolerance", () => {
    const mac = createHmac("sha256", secret).update(`1000.${body}`).digest("hex");
    const check = (header: string) => verifyPayloadSignature(secret, header, body, { nowS: 1000 });
    expect(check(`t=1000,v1=${mac}`)).toBeUndefined();
    expect(check(`t=1000x,v1=${mac}`)).toBe("malformed");
    expect(check(`t=x1000,v1=${mac}`)).toBe("malformed");
    expect(check(`t=1000,v1=${mac}00`)).toBe("malformed");
    expect(check(`t=1000,v1=00${mac}`)).toBe("malformed");
    expect(check(`v1=${mac}`)).toBe("malformed");
    expect(check("t=1000")).toBe("malformed");
    const at = signPayload(secret, body, 1000);
    expect(verifyPayloadSignature(secret, at, body, { nowS: 1300 })).toBeUndefined();
    expect(verifyPayloadSignature(secret, at, body, { nowS: 1301 })).toBe("stale");
    expect(verifyPayloadSignature(secret, at, body, { nowS: 1010, toleranceS: 5 })).toBe("stale");
    expect(readSignatureHeader(at, { nowS: 1000 })).toEqual({ t: "1000", v1: at.split("v1=")[1] });
  });
});
