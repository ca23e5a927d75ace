// What Ctrl-C does, one press at a time: the first asks a recording to stop (its file still comes) or
// stops the CLI with its clean-up; the next quits at once. One Ctrl-C can arrive twice: `pnpm reelay …`
// passes on the SIGINT that the terminal has already sent to the whole foreground process group, this
// process included. SIGINTs this close together are one press, so a person's single Ctrl-C never
// counts as the second one that quits without the file.
import type { Interrupt } from './get.js';

export const SAME_PRESS_MS = 500;

export function interruptHandler(deps: {
  stopped: Interrupt;
  controller: AbortController;
  exit: (code: number) => void;
  now?: () => number;
}): () => void {
  const now = deps.now ?? Date.now;
  let lastAt = -Infinity;
  return () => {
    const at = now();
    const repeated = at - lastAt < SAME_PRESS_MS;
    lastAt = at;
    if (repeated) return;
    // A second Ctrl-C does not wait for any clean-up.
    if (deps.controller.signal.aborted) return deps.exit(130);
    // A recording in progress: the first Ctrl-C asks the server to stop it, and the file still comes.
    if (deps.stopped.onInterrupt) return deps.stopped.onInterrupt();
    deps.controller.abort();
  };
}
