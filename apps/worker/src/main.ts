// Worker entry point (`node apps/worker/dist/main.js`): see run.ts.
import { runWorkerProcess } from './run.js';

runWorkerProcess().catch((err: unknown) => {
  process.stderr.write(`worker failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
