import { isId, JwtError, type JwtVerifier } from "@flashgate/auth";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./problem.ts";

function bearer(header: string | undefined): string {
  if (!header?.startsWith("Bearer ")) throw new ApiError("UNAUTHORIZED", "a Bearer token is required");
  return header.slice(7).trim();
}

function verified(verify: JwtVerifier, token: string) {
  try {
    return verify(token);
  } catch (error) {
    if (error instanceof JwtError) throw new ApiError("UNAUTHORIZED", error.message);
    throw error;
  }
}

/** Storefront callers: HS256 JWT whose sub is the numeric user id; every order is bound to it. */
export function authenticateUser(verify: JwtVerifier, authorization: string | undefined): string {
  const claims = verified(verify, bearer(authorization));
  if (!isId(claims.sub)) throw new ApiError("UNAUTHORIZED", "invalid token: sub is not a user id");
  return claims.sub;
}

export const requireUser =
  (verify: JwtVerifier): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    c.set("userId", authenticateUser(verify, c.req.header("authorization")));
    await next();
  };

/**
 * Back-office callers: a JWT signed with the admin secret and role admin. A valid storefront token is
 * recognised and refused with 403, so a user learns they are authenticated but not allowed.
 */
export const requireAdmin =
  (verifyAdmin: JwtVerifier, verifyUser: JwtVerifier): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const token = bearer(c.req.header("authorization"));
    let claims: ReturnType<JwtVerifier>;
    try {
      claims = verifyAdmin(token);
    } catch (error) {
      if (!(error instanceof JwtError)) throw error;
      if (error.reason === "signature" && isValid(verifyUser, token))
        throw new ApiError("FORBIDDEN", "an admin token is required");
      throw new ApiError("UNAUTHORIZED", error.message);
    }
    if (claims.role !== "admin") throw new ApiError("FORBIDDEN", "an admin token is required");
    c.set("operator", claims.sub);
    await next();
  };

const isValid = (verify: JwtVerifier, token: string) => {
  try {
    verify(token);
    return true;
  } catch {
    return false;
  }
};
