/**
 * The local dev stack, loaded only by the commands that run it (up, down, demo…) and by those that fall
 * back to it when no URL is given: an operator's migrate, connectors or drift check on their own servers
 * never loads it (nor its jar downloader).
 */
export const localStack = () => import("@flashgate/stack");

/** The errors the local stack reports; it is not loaded to recognise them. */
export const isStackError = (error: unknown): error is Error =>
  error instanceof Error && error.name === "StackError";
