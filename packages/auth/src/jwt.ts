import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto";

export interface JwtClaims {
  sub: string;
  exp: number;
  iat?: number;
  role?: string;
}

export type JwtFailure = "malformed" | "algorithm" | "signature" | "expired" | "claims";

export class JwtError extends Error {
  override name = "JwtError";
  readonly reason: JwtFailure;
  constructor(reason: JwtFailure) {
    super(`invalid token: ${reason}`);
    this.reason = reason;
  }
}

const HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");

export function signJwt(secret: string, claims: JwtClaims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  const signature = createHmac("sha256", secret).update(`${HEADER}.${payload}`).digest("base64url");
  return `${HEADER}.${payload}.${signature}`;
}

/**
 * HS256 only: the header must name HS256, so `alg: none` and algorithm confusion are refused before
 * the signature is even looked at. Verified headers are cached because a sale's tokens share one.
 */
export function createJwtVerifier(secret: string, options: { clockSkewS?: number } = {}) {
  // A KeyObject made once: handing createHmac a Buffer re-imports the key on every call (~6× slower).
  const key = createSecretKey(Buffer.from(secret));
  const skew = options.clockSkewS ?? 30;
  const goodHeaders = new Set<string>();
  // A token verified once needs no second HMAC: buyers retry with the same token. Expiry is still
  // checked on every use; the cache is bounded and simply starts over when full.
  const verified = new Map<string, JwtClaims>();
  return function verifyJwt(token: string, nowS = Date.now() / 1000): JwtClaims {
    const known = verified.get(token);
    if (known) {
      if (known.exp + skew < nowS) throw new JwtError("expired");
      return known;
    }
    const first = token.indexOf(".");
    const second = token.indexOf(".", first + 1);
    if (first < 1 || second < 0 || token.indexOf(".", second + 1) !== -1 || token.length > 4096)
      throw new JwtError("malformed");
    const header = token.slice(0, first);
    if (!goodHeaders.has(header)) {
      let alg: unknown;
      try {
        alg = JSON.parse(Buffer.from(header, "base64url").toString()).alg;
      } catch {
        throw new JwtError("malformed");
      }
      if (alg !== "HS256") throw new JwtError("algorithm");
      if (goodHeaders.size < 16) goodHeaders.add(header);
    }
    const expected = createHmac("sha256", key).update(token.slice(0, second)).digest();
    const given = Buffer.from(token.slice(second + 1), "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new JwtError("signature");
    let claims: JwtClaims;
    try {
      claims = JSON.parse(Buffer.from(token.slice(first + 1, second), "base64url").toString());
    } catch {
      throw new JwtError("malformed");
    }
    if (
      typeof claims !== "object" ||
      claims === null ||
      typeof claims.sub !== "string" ||
      typeof claims.exp !== "number"
    ) {
      throw new JwtError("claims");
    }
    if (claims.exp + skew < nowS) throw new JwtError("expired");
    if (verified.size >= 100_000) verified.clear();
    verified.set(token, claims);
    return claims;
  };
}

export type JwtVerifier = ReturnType<typeof createJwtVerifier>;
