import type { Logger } from "@flashgate/logger";

/** Runs `task` every `intervalMs` (0 = never), never two at once; failures are logged, not thrown. Returns stop. */
export function every(
  intervalMs: number,
  name: string,
  task: () => Promise<unknown>,
  logger: Logger,
): () => void {
  if (intervalMs <= 0) return () => {};
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      await task();
    } catch (error) {
      logger.warn({ err: (error as Error).message, task: name }, `${name} failed`);
    } finally {
      running = false;
    }
  }, intervalMs);
  return () => clearInterval(timer);
}
