import { createJwtVerifier } from "@flashgate/auth";
import type { Context } from "hono";

/**
 * The same request contract and token check as flashgate (one verifier per process, with its
 * verified-token cache), so the baselines differ only in design.
 */
export function purchaseParser(secret: string) {
  const verify = createJwtVerifier(secret);
  return async (c: Context) => {
    const auth = c.req.header("authorization") ?? "";
    let userId: string;
    try {
      userId = verify(auth.slice(7)).sub;
    } catch {
      return { error: c.json({ code: "UNAUTHORIZED" }, 401) };
    }
    const requestId = c.req.header("idempotency-key") ?? "";
    const body = (await c.req.json()) as { activityId: number; skuId: number };
    return { userId, requestId, activityId: body.activityId, skuId: body.skuId };
  };
}

export const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

/** The API's problem code for each refusal a MySQL decision gives. */
export const refusalCode = {
  sold_out: "SOLD_OUT",
  already_purchased: "ALREADY_PURCHASED",
  key_reused: "IDEMPOTENCY_KEY_REUSED",
  not_open: "ACTIVITY_NOT_OPEN",
  unknown_sku: "NOT_FOUND",
} as const;
