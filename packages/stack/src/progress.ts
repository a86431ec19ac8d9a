/** Progress for long steps: what we wait for and for how long, one line per update. */
export interface Progress {
  step(title: string): StepProgress;
  info(line: string): void;
}

export interface StepProgress {
  waiting(what: string): void;
  done(detail?: string): void;
  fail(detail: string): void;
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)}s`;

export function consoleProgress(out: NodeJS.WritableStream = process.stderr): Progress {
  return {
    info: (line) => out.write(`${line}\n`),
    step(title) {
      const started = Date.now();
      let lastReport = 0;
      out.write(`▸ ${title}\n`);
      return {
        waiting(what) {
          if (Date.now() - lastReport < 2000) return;
          lastReport = Date.now();
          out.write(`  … ${what} (${seconds(started)})\n`);
        },
        done: (detail) => out.write(`  ✓ ${title}${detail ? ` — ${detail}` : ""} (${seconds(started)})\n`),
        fail: (detail) => out.write(`  ✗ ${title}: ${detail} (${seconds(started)})\n`),
      };
    },
  };
}

export const silentProgress: Progress = {
  info: () => {},
  step: () => ({ waiting: () => {}, done: () => {}, fail: () => {} }),
};
