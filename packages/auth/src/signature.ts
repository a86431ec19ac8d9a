import { createHmac, timingSafeEqual } from "node:crypto";

/** `Flashgate-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>` */
export function signPayload(
  secret: string,
  rawBody: string,
  timestampS = Math.floor(Date.now() / 1000),
): string {
  const mac = createHmac("sha256", secret).update(`${timestampS}.${rawBody}`).digest("hex");
  return `t=${timestampS},v1=${mac}`;
}

export type SignatureFailure = "missing" | "malformed" | "stale" | "mismatch";

export interface SignatureHeader {
  t: string;
  v1: string;
}

interface Freshness {
  nowS?: number;
  toleranceS?: number;
}

/** The header's shape and age, checkable before the body is read: a forged call costs no body read. */
export function readSignatureHeader(
  header: string | undefined,
  options: Freshness = {},
): SignatureHeader | SignatureFailure {
  if (!header) return "missing";
  const parts = new Map(header.split(",").map((part) => part.trim().split("=", 2) as [string, string]));
  const t = parts.get("t");
  const v1 = parts.get("v1");
  if (!t || !v1 || !/^\d{1,12}$/.test(t) || !/^[0-9a-f]{64}$/.test(v1)) return "malformed";
  const now = options.nowS ?? Date.now() / 1000;
  if (Math.abs(now - Number(t)) > (options.toleranceS ?? 300)) return "stale";
  return { t, v1 };
}

export function verifyPayloadSignature(
  secret: string,
  header: string | SignatureHeader | undefined,
  rawBody: string,
  options: Freshness = {},
): SignatureFailure | undefined {
  const signature = typeof header === "object" ? header : readSignatureHeader(header, options);
  if (typeof signature === "string") return signature;
  const expected = createHmac("sha256", secret).update(`${signature.t}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(signature.v1, "hex")) ? undefined : "mismatch";
}
