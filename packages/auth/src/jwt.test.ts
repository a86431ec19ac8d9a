import { describe, expect, it } from "vitest";
import { createJwtVerifier, type JwtError, signJwt } from "./jwt.ts";

const secret = "a-test-secret-that-is-long-enough";
const verify = createJwtVerifier(secret, { clockSkewS: 0 });
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const reason = (token: string, now?: number) => {
  try {
    verify(token, now);
    return "ok";
  } catch (error) {
    return (error as JwtError).reason;
  }
};

describe("HS256 JWT", () => {
  it("accepts its own tokens and returns the claims", () => {
    const token = signJwt(secret, { sub: "42", exp: 2_000_000_000 });
    expect(verify(token, 1_000_000_000)).toMatchObject({ sub: "42", exp: 2_000_000_000 });
  });

  it("refuses alg none, other algorithms, bad signatures, expiry, missing claims and junk", () => {
    const good = signJwt(secret, { sub: "42", exp: 2_000_000_000 });
    const [, payload, signature] = good.split(".");
    expect(reason(`${b64({ alg: "none" })}.${payload}.`)).toBe("algorithm");
    expect(reason(`${b64({ alg: "HS512" })}.${payload}.${signature}`)).toBe("algorithm");
    expect(reason(signJwt("another-secret-entirely-123", { sub: "42", exp: 2_000_000_000 }))).toBe(
      "signature",
    );
    expect(reason(`${good.slice(0, -2)}xx`)).toBe("signature");
    expect(reason(good, 2_000_000_001)).toBe("expired");
    expect(reason(signJwt(secret, { sub: "42" } as never))).toBe("claims");
    expect(reason("a.b")).toBe("malformed");
    expect(reason("")).toBe("malformed");
    expect(reason(`${b64({ alg: "HS256" })}.%%%.${signature}`)).toBe("signature");
  });

  it("does not let a payload swap keep the signature valid", () => {
    const token = signJwt(secret, { sub: "42", exp: 2_000_000_000 });
    const [header, , signature] = token.split(".");
    expect(reason(`${header}.${b64({ sub: "1", exp: 2_000_000_000 })}.${signature}`)).toBe("signature");
  });

  it("refuses an expired token the first time a verifier sees it, not only when an earlier check cached it", () => {
    const fresh = createJwtVerifier(secret, { clockSkewS: 0 });
    const token = signJwt(secret, { sub: "43", exp: 1_500_000_000 });
    expect(() => fresh(token, 1_500_000_001)).toThrow(expect.objectContaining({ reason: "expired" }));
  });
});
