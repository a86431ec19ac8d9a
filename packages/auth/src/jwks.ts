import { setTimeout } from "node:timers/promises";
import { createRemoteJWKSet, errors, jwtVerify } from "jose";
import { type JwtClaims, JwtError, type JwtFailure, verifiedTokens } from "./jwt.ts";

export interface JwksVerifierOptions {
  /** The identity provider's key set (its `jwks_uri`). */
  url: string;
  /** Required: a token of another issuer or for another audience is refused. */
  issuer: string;
  audience: string;
  clockSkewS?: number;
  /**
   * A token naming a key the set lacks fetches the set again, at most once per this many ms: one that
   * comes sooner waits for the next fetch, shared by every token waiting, so a rotated key is accepted on
   * its first token and a flood of forged key ids costs one fetch per cooldown.
   */
  refetchCooldownMs?: number;
  /** The verified-token cache starts over past this many bytes of tokens. */
  cacheBytes?: number;
}

/** The key set could not be fetched: the token is not judged (a dependency down, not a bad token). */
export class JwksUnavailableError extends Error {
  override name = "JwksUnavailableError";
}

/** The asymmetric algorithms identity providers sign with; HS256 (a shared secret) is not one of them. */
const algorithms = ["RS256", "ES256", "EdDSA"];

/** jose's verdicts, as flashgate's token failures. */
function failure(error: unknown): JwtFailure {
  if (error instanceof errors.JWTExpired) return "expired";
  if (error instanceof errors.JWTClaimValidationFailed)
    return error.claim === "nbf" || error.claim === "iat" ? "not_yet_valid" : "claims";
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
    return "algorithm";
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey)
    return "signature";
  return "malformed";
}

/**
 * Storefront tokens signed by the storefront's identity provider (RS256, ES256, EdDSA), verified against
 * its published key set through `jose` (ADR 0026): keys cached, fetched again only for a key id the set
 * lacks and at most once per cooldown. A token verified once is answered from memory (bounded by bytes,
 * expiry still checked on each use), synchronously: the flood of a sale's retries costs no signature.
 */
export function createJwksVerifier(options: JwksVerifierOptions) {
  const skew = options.clockSkewS ?? 30;
  const cooldownMs = options.refetchCooldownMs ?? 1_000;
  const keys = createRemoteJWKSet(new URL(options.url), {
    cooldownDuration: cooldownMs,
    timeoutDuration: 2_000,
  });
  /** The fetch after the cooldown, shared by the tokens that named an unknown key during it. */
  let nextFetch: Promise<void> | undefined;
  const fetchAfterCooldown = () =>
    (nextFetch ??= setTimeout(cooldownMs)
      .then(() => keys.reload())
      .finally(() => {
        nextFetch = undefined;
      }));
  const rules = {
    issuer: options.issuer,
    audience: options.audience,
    algorithms,
    clockTolerance: skew,
    requiredClaims: ["sub", "exp"],
  };
  const verifyWithKeys = async (token: string) => {
    const coolingDown = keys.coolingDown;
    try {
      return await jwtVerify(token, keys, rules);
    } catch (error) {
      // jose fetches again for an unknown key only past its cooldown: within it, wait for the next.
      if (!(error instanceof errors.JWKSNoMatchingKey) || !coolingDown) throw error;
      await fetchAfterCooldown();
      return await jwtVerify(token, keys, rules);
    }
  };
  const verified = verifiedTokens(options.cacheBytes ?? 16 * 1024 * 1024, skew);

  async function verifyFresh(token: string): Promise<JwtClaims> {
    let claims: JwtClaims;
    try {
      ({ payload: claims } = (await verifyWithKeys(token)) as unknown as { payload: JwtClaims });
    } catch (error) {
      if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || isFetchFailure(error))
        throw new JwksUnavailableError(
          `the identity provider's keys are unavailable: ${(error as Error).message}`,
        );
      throw new JwtError(failure(error));
    }
    if (typeof claims.sub !== "string" || typeof claims.exp !== "number") throw new JwtError("claims");
    verified.remember(token, claims);
    return claims;
  }

  function verifyJwks(token: string, nowS = Date.now() / 1000): JwtClaims | Promise<JwtClaims> {
    const known = verified.known(token, nowS);
    if (known) return known;
    if (token.length > 4096) throw new JwtError("malformed");
    return verifyFresh(token);
  }
  return Object.assign(verifyJwks, { cachedBytes: verified.bytes });
}

/** fetch's own failures (refused, reset, DNS), and jose's generic error: a key set answered badly. */
const isFetchFailure = (error: unknown) =>
  error instanceof TypeError || (error as Error | undefined)?.constructor === errors.JOSEError;
