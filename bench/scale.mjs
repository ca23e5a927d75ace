// pnpm bench (or node bench/scale.mjs after pnpm build): the replicas scenario's figures, 2 gateways
// and 2 workers on one Redis and one S3-compatible store, one worker SIGKILLed mid-run.
import { runScaleScenario } from './scale-scenario.mjs';

export async function benchScale() {
  const f = await runScaleScenario({ log: (m) => console.log(`scale: ${m}`) });
  console.log(
    `scale: ${f.jobs} jobs (attempts started ${f.attemptsStarted}), ${f.killed} worker SIGKILLed with ${f.runningOnKilled} running`,
  );
  console.log(
    `scale: completed ${f.completed}, failed ${f.failed}, lost ${f.lost}, completed twice ${f.duplicates}; all done ${f.secondsAfterKill.toFixed(1)} s after the kill`,
  );
  console.log(
    `scale: artifacts byte-identical through both gateways ${f.identicalThroughBoth}/${f.completed}; direct streams ok ${f.directOk}/${f.directs}`,
  );
  console.log(
    `scale: playground ${f.playground200}×200 + ${f.playground429}×429 for a shared limit of ${f.publicLimit}/min`,
  );
  console.log(
    `scale: ${f.requests} requests (${f.polls} polls), 5xx ${f.fivexx}, statuses ${JSON.stringify(f.statuses)}; ${f.seconds.toFixed(1)} s in all`,
  );
  return f;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchScale();
