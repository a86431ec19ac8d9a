import { z } from "zod";

export const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

export const url = (fallback?: string) => (fallback === undefined ? z.url() : z.url().default(fallback));

/** A secret must be long enough to resist guessing; it is never logged. */
/** An HMAC key: 32 bytes at least, the size of the SHA-256 output it keys. */
export const secret = () =>
  z.string().refine((value) => Buffer.byteLength(value) >= 32, "must be at least 32 bytes");
