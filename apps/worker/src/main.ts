// Worker entry point (`node apps/worker/dist/main.js`): see run.ts.
import { MetricsPortInUseError } from './health-server.js';
import { runWorkerProcess } from './run.js';

runWorkerProcess().catch((err: unknown) => {
  // A taken port is the operator's to fix: one line, and exit 2 (configuration, as in run.ts), which
  // tells `pnpm start` that restarting would not help.
  if (err instanceof MetricsPortInUseError) {
    process.stderr.write(`worker failed to start: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`worker failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
