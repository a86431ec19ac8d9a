import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createJwtVerifier, type JwtError, signJwt } from "./jwt.ts";

const secret = "a-test-secret-that-is-long-enough";
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
/** Each check on a verifier of its own: a token cached by an earlier check must not decide a later one. */
const reason = (
  token: string,
  now = 1_000_000_000,
  verify = createJwtVerifier(secret, { clockSkewS: 0 }),
) => {
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
    const verify = createJwtVerifier(secret, { clockSkewS: 0 });
    expect(verify(token, 1_000_000_000)).toMatchObject({ sub: "42", exp: 2_000_000_000 });
    expect(JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString())).toEqual({
      alg: "HS256",
      typ: "JWT",
    });
  });

  it("checks expiry against the clock by default, at the second, for a token seen before too", () => {
    const nowS = Math.floor(Date.now() / 1000);
    const verify = createJwtVerifier(secret, { clockSkewS: 0 });
    expect(verify(signJwt(secret, { sub: "1", exp: nowS + 600 })).sub).toBe("1");
    expect(() => verify(signJwt(secret, { sub: "1", exp: nowS - 600 }))).toThrow(
      expect.objectContaining({ name: "JwtError", reason: "expired", message: "invalid token: expired" }),
    );
    const token = signJwt(secret, { sub: "2", exp: 1000 });
    expect(verify(token, 1000).sub).toBe("2"); // cached now
    expect(verify(token, 1000).sub).toBe("2");
    expect(() => verify(token, 1000.5)).toThrow(expect.objectContaining({ reason: "expired" }));
    const skewed = createJwtVerifier(secret, { clockSkewS: 30 });
    expect(skewed(token, 1029).sub).toBe("2");
    expect(skewed(token, 1030).sub).toBe("2");
    expect(() => skewed(token, 1031)).toThrow(expect.objectContaining({ reason: "expired" }));
    expect(() => createJwtVerifier(secret, { clockSkewS: 30 })(token, 1031)).toThrow(
      expect.objectContaining({ reason: "expired" }),
    );
  });

  it("refuses a token of the wrong shape as malformed, whatever its parts", () => {
    const good = signJwt(secret, { sub: "42", exp: 2_000_000_000 });
    const [header, payload] = good.split(".");
    expect(reason(`${good}.x`)).toBe("malformed");
    expect(reason(`${header}.${payload}`)).toBe("malformed");
    expect(reason(`.${payload}.x`)).toBe("malformed");
    // Longer than 4096 characters though correctly signed; exactly 4096 is accepted.
    const padded = (n: number) => signJwt(secret, { sub: "42", exp: 2_000_000_000, role: "x".repeat(n) });
    let n = 3000;
    while (padded(n).length < 4096) n++;
    const exact = [n - 1, n, n + 1].map(padded).find((t) => t.length === 4096);
    if (exact) expect(reason(exact)).toBe("ok");
    expect(reason(padded(n + 10))).toBe("malformed");
  });

  it("refuses claims that are not an object with a string sub and a numeric exp", () => {
    const signed = (payload: string) => {
      const head = good().split(".")[0];
      const body = Buffer.from(payload).toString("base64url");
      const sig = createHmac("sha256", secret).update(`${head}.${body}`).digest("base64url");
      return `${head}.${body}.${sig}`;
    };
    const good = () => signJwt(secret, { sub: "42", exp: 2_000_000_000 });
    expect(reason(signed("null"))).toBe("claims");
    expect(reason(signed('"42"'))).toBe("claims");
    expect(reason(signed('{"sub":42,"exp":2000000000}'))).toBe("claims");
    expect(reason(signed('{"sub":"42","exp":"2000000000"}'))).toBe("claims");
    expect(reason(signed("{not json"))).toBe("malformed");
    expect(reason(signed('{"sub":"42","exp":2000000000}'))).toBe("ok");
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

  it("refuses any other spelling of a valid signature: one token cannot be made into many", () => {
    const fresh = createJwtVerifier(secret, { clockSkewS: 0 });
    const token = signJwt(secret, { sub: "42", exp: 2_000_000_000 });
    const signature = token.slice(token.lastIndexOf(".") + 1);
    // The last character carries 2 unused bits: three other characters decode to the same bytes.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(signature.at(-1) as string);
    const sameBytes = [0, 1, 2, 3]
      .map((low) => alphabet[(last & ~3) | low])
      .filter((char) => char !== signature.at(-1))
      .map((char) => `${token.slice(0, -1)}${char}`);
    for (const variant of [
      `${token}=`,
      `${token}!`,
      `${token}%20`,
      `${token} `,
      `${token}A`,
      `!${token}`,
      ...sameBytes,
    ]) {
      expect(() => fresh(variant, 1_000_000_000), variant).toThrow(
        expect.objectContaining({ reason: "signature" }),
      );
    }
    expect(fresh(token, 1_000_000_000).sub).toBe("42");
  });

  it("refuses a token not valid yet (nbf) or issued in the future (iat), beyond the clock skew", () => {
    const skewed = createJwtVerifier(secret, { clockSkewS: 30 });
    const now = 1_000_000_000;
    const at = (claims: object) => () =>
      skewed(signJwt(secret, { sub: "42", exp: now + 600, ...claims }), now);
    expect(at({ nbf: now + 31 })).toThrow(expect.objectContaining({ reason: "not_yet_valid" }));
    expect(at({ iat: now + 3600 })).toThrow(expect.objectContaining({ reason: "not_yet_valid" }));
    expect(at({ nbf: now + 10, iat: now - 10 })()).toMatchObject({ sub: "42" });
  });

  it("checks the issuer and audience when configured", () => {
    const strict = createJwtVerifier(secret, { clockSkewS: 0, issuer: "shop", audience: "flashgate" });
    const token = (claims: object) => signJwt(secret, { sub: "42", exp: 2_000_000_000, ...claims });
    expect(strict(token({ iss: "shop", aud: ["other", "flashgate"] }), 1_000_000_000).sub).toBe("42");
    expect(() => strict(token({ iss: "evil", aud: "flashgate" }), 1_000_000_000)).toThrow(
      expect.objectContaining({ reason: "claims" }),
    );
    expect(() => strict(token({ iss: "shop" }), 1_000_000_000)).toThrow(
      expect.objectContaining({ reason: "claims" }),
    );
  });

  it("caches a verified token once and keeps the cache within its bytes", () => {
    const verify = createJwtVerifier(secret, { clockSkewS: 0, cacheBytes: 1000 });
    const token = (user: number) => signJwt(secret, { sub: String(user), exp: 2_000_000_000 });
    verify(token(1), 1_000_000_000);
    const one = verify.cachedBytes();
    expect(one).toBe(token(1).length);
    verify(token(1), 1_000_000_000);
    expect(verify.cachedBytes()).toBe(one);
    for (let user = 2; user < 40; user++) {
      verify(token(user), 1_000_000_000);
      expect(verify.cachedBytes()).toBeGreaterThan(0);
      expect(verify.cachedBytes()).toBeLessThanOrEqual(1000);
    }
  });
});
