import { z } from "zod";

export const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

export const url = (fallback?: string) => (fallback === undefined ? z.url() : z.url().default(fallback));

/** A secret must be long enough to resist guessing; it is never logged. */
export const secret = () => z.string().min(16, "must be at least 16 characters");
