/**
 * Replies Redis gives while it cannot take writes for a while (out of memory, a replica after a
 * failover, a long script, a master or cluster down, a dataset still loading): nothing is wrong with the
 * change, so it is retried — never dead-lettered, never taken for a fault of one SKU.
 */
const transientReply = /^(OOM|READONLY|BUSY|MASTERDOWN|LOADING|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MISCONF)\b/;

/**
 * Whether a failure lies with one SKU's data or state (a script refusing it, a key of the wrong type,
 * arguments past a limit) rather than with a dependency that every SKU shares. Only such a failure
 * isolates its SKU; anything else holds the whole batch and is retried.
 */
export function isSkuFailure(error: unknown): boolean {
  const { name, message } = error as Error;
  if (name === "ReplyError") return !transientReply.test(message);
  return name === "RangeError" || name === "TypeError";
}
