import {
  isId,
  JwksUnavailableError,
  type JwtClaims,
  JwtError,
  type JwtVerifier,
  type TokenVerifier,
} from "@flashgate/auth";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./problem.ts";

function bearer(header: string | undefined): string {
  if (!header?.startsWith("Bearer ")) throw new ApiError("UNAUTHORIZED", "a Bearer token is required");
  return header.slice(7).trim();
}

/** A bad token is a 401; the identity provider's keys out of reach are a 503, not the caller's fault. */
function asApiError(error: unknown): never {
  if (error instanceof JwtError) throw new ApiError("UNAUTHORIZED", error.message);
  if (error instanceof JwksUnavailableError) throw new ApiError("UNAVAILABLE", error.message);
  throw error;
}

function userOf(claims: JwtClaims): string {
  if (!isId(claims.sub)) throw new ApiError("UNAUTHORIZED", "invalid token: sub is not a user id");
  return claims.sub;
}

/**
 * Storefront callers: a JWT whose sub is the numeric user id; every order is bound to it. At once when
 * the verifier answers at once (the shared secret, a token seen before), else once its key is at hand.
 */
export function authenticateUser(
  verify: TokenVerifier,
  authorization: string | undefined,
): string | Promise<string> {
  let claims: JwtClaims | Promise<JwtClaims>;
  try {
    claims = verify(bearer(authorization));
  } catch (error) {
    asApiError(error);
  }
  return claims instanceof Promise ? claims.then(userOf, asApiError) : userOf(claims);
}

export const requireUser =
  (verify: TokenVerifier): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    c.set("userId", await authenticateUser(verify, c.req.header("authorization")));
    await next();
  };

/**
 * Back-office callers: a JWT signed with the admin secret and role admin. A valid storefront token is
 * recognised and refused with 403, so a user learns they are authenticated but not allowed.
 */
export const requireAdmin =
  (verifyAdmin: JwtVerifier, verifyUser: TokenVerifier): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const token = bearer(c.req.header("authorization"));
    let claims: JwtClaims;
    try {
      claims = verifyAdmin(token);
    } catch (error) {
      if (!(error instanceof JwtError)) throw error;
      // Another key's signature, or another algorithm (the identity provider's): perhaps a storefront token.
      const another = error.reason === "signature" || error.reason === "algorithm";
      if (another && (await isValid(verifyUser, token)))
        throw new ApiError("FORBIDDEN", "an admin token is required");
      throw new ApiError("UNAUTHORIZED", error.message);
    }
    if (claims.role !== "admin") throw new ApiError("FORBIDDEN", "an admin token is required");
    c.set("operator", claims.sub);
    await next();
  };

const isValid = async (verify: TokenVerifier, token: string) => {
  try {
    await verify(token);
    return true;
  } catch {
    return false;
  }
};
