/**
 * The one rule for an id a caller names — a user (a token's `sub`), an activity, a SKU: a positive
 * decimal integer that JavaScript holds exactly (≤ 2^53 − 1), written without a sign or leading zeros.
 * The API, the CLI and the tokens the CLI mints all accept exactly these.
 */
export const idPattern = /^[1-9]\d{0,15}$/;

export function parseId(text: string): number | undefined {
  if (!idPattern.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

export const isId = (text: string) => parseId(text) !== undefined;

/**
 * An Idempotency-Key (its user's: another user's same key is another purchase) and an order's id (a
 * UUID; an order placed before keys were scoped to users has its key as its id): 8–64 characters of
 * base64url's alphabet.
 */
export const requestIdPattern = /^[A-Za-z0-9_-]{8,64}$/;

export const isRequestId = (text: string) => requestIdPattern.test(text);
