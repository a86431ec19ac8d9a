import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto";

export interface JwtClaims {
  sub: string;
  exp: number;
  iat?: number;
  nbf?: number;
  iss?: string;
  aud?: string | string[];
  role?: string;
}

export type JwtFailure = "malformed" | "algorithm" | "signature" | "expired" | "not_yet_valid" | "claims";

export class JwtError extends Error {
  override name = "JwtError";
  readonly reason: JwtFailure;
  constructor(reason: JwtFailure) {
    super(`invalid token: ${reason}`);
    this.reason = reason;
  }
}

/**
 * Tokens verified once, by their text: buyers retry with the same token, and a second signature check
 * would cost the sold-out path its floor. Expiry is still checked on every use; the memory is bounded by
 * bytes and simply starts over when full.
 */
export function verifiedTokens(cacheBytes: number, skewS: number) {
  const verified = new Map<string, JwtClaims>();
  let bytes = 0;
  return {
    /** The token's claims if it was verified before (an expired one is refused), else undefined. */
    known(token: string, nowS: number): JwtClaims | undefined {
      const claims = verified.get(token);
      if (claims && claims.exp + skewS < nowS) throw new JwtError("expired");
      return claims;
    },
    remember(token: string, claims: JwtClaims): void {
      if (bytes + token.length > cacheBytes) {
        verified.clear();
        bytes = 0;
      }
      verified.set(token, claims);
      bytes += token.length;
    },
    bytes: () => bytes,
  };
}

const HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");

export function signJwt(secret: string, claims: JwtClaims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  const signature = createHmac("sha256", secret).update(`${HEADER}.${payload}`).digest("base64url");
  return `${HEADER}.${payload}.${signature}`;
}

/** An HS256 signature in canonical base64url: 43 characters, and the only spelling of its 32 bytes. */
const signatureShape = /^[A-Za-z0-9_-]{43}$/;

export interface JwtVerifierOptions {
  clockSkewS?: number;
  /** When set, the token's `iss` must equal it. */
  issuer?: string;
  /** When set, the token's `aud` must be it or contain it. */
  audience?: string;
  /** The verified-token cache starts over past this many bytes of tokens. */
  cacheBytes?: number;
}

/**
 * HS256 only: the header must name HS256, so `alg: none` and algorithm confusion are refused before
 * the signature is even looked at. The signature must be spelled canonically, so one token cannot be
 * made into many (base64url decoding skips junk): each would be a new entry in the caches. Headers are
 * cached once a token carrying them verified, because a sale's tokens share one.
 */
export function createJwtVerifier(secret: string, options: JwtVerifierOptions = {}) {
  // A KeyObject made once: handing createHmac a Buffer re-imports the key on every call (~6× slower).
  const key = createSecretKey(Buffer.from(secret));
  const skew = options.clockSkewS ?? 30;
  // Stryker disable next-line ArithmeticOperator: any bound is correct; its size is a memory choice, not a verdict.
  const cacheBytes = options.cacheBytes ?? 16 * 1024 * 1024;
  const goodHeaders = new Set<string>();
  const verified = verifiedTokens(cacheBytes, skew);
  function verifyJwt(token: string, nowS = Date.now() / 1000): JwtClaims {
    const known = verified.known(token, nowS);
    if (known) return known;
    const first = token.indexOf(".");
    const second = token.indexOf(".", first + 1);
    if (first < 1 || second < 0 || token.indexOf(".", second + 1) !== -1 || token.length > 4096)
      throw new JwtError("malformed");
    const header = token.slice(0, first);
    const knownHeader = goodHeaders.has(header);
    // Stryker disable next-line ConditionalExpression: the header cache only saves a JSON.parse; a known header is HS256's.
    if (!knownHeader) {
      let alg: unknown;
      try {
        alg = JSON.parse(Buffer.from(header, "base64url").toString()).alg;
      } catch {
        throw new JwtError("malformed");
      }
      if (alg !== "HS256") throw new JwtError("algorithm");
    }
    const signature = token.slice(second + 1);
    if (!signatureShape.test(signature)) throw new JwtError("signature");
    const expected = createHmac("sha256", key).update(token.slice(0, second)).digest();
    const given = Buffer.from(signature, "base64url");
    if (!timingSafeEqual(given, expected) || given.toString("base64url") !== signature)
      throw new JwtError("signature");
    // Stryker disable next-line all: which headers are remembered changes no verdict (see above), only work.
    if (!knownHeader && goodHeaders.size < 16) goodHeaders.add(header);
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
      typeof claims.exp !== "number" ||
      (options.issuer !== undefined && claims.iss !== options.issuer) ||
      (options.audience !== undefined &&
        !(Array.isArray(claims.aud)
          ? claims.aud.includes(options.audience)
          : claims.aud === options.audience))
    ) {
      throw new JwtError("claims");
    }
    if (claims.exp + skew < nowS) throw new JwtError("expired");
    // Not valid before a time still to come, or issued in the future: refused until then.
    for (const notBefore of [claims.nbf, claims.iat])
      if (notBefore !== undefined && (typeof notBefore !== "number" || notBefore - skew > nowS))
        throw new JwtError("not_yet_valid");
    verified.remember(token, claims);
    return claims;
  }
  /** Bytes of tokens the verified-token cache holds now (bounded by `cacheBytes`). */
  return Object.assign(verifyJwt, { cachedBytes: verified.bytes });
}

export type JwtVerifier = ReturnType<typeof createJwtVerifier>;

/**
 * A storefront token's verifier: the shared secret's (HS256, answered at once) or the identity
 * provider's key set (createJwksVerifier: at once for a token seen before, else once its key is at hand).
 */
export type TokenVerifier = ((token: string, nowS?: number) => JwtClaims | Promise<JwtClaims>) & {
  cachedBytes(): number;
};
