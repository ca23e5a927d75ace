// Ctrl-C, press by press, with a clock the test holds: a SIGINT passed on by pnpm a moment after the
// terminal's is the same press; a press later is the second one.
import { expect, test } from '@jest/globals';
import type { Interrupt } from '../src/get.js';
import { interruptHandler, SAME_PRESS_MS } from '../src/interrupt.js';

function setup(stopped: Interrupt = {}) {
  let clock = 1_000_000;
  const exits: number[] = [];
  const controller = new AbortController();
  const press = interruptHandler({ stopped, controller, exit: (code) => exits.push(code), now: () => clock });
  return { press, controller, exits, later: (ms: number) => (clock += ms) };
}

test("pnpm's copy of the terminal's SIGINT is the same press: the CLI stops with its clean-up, it does not quit", () => {
  const { press, controller, exits, later } = setup();
  press();
  expect(controller.signal.aborted).toBe(true);
  later(5);
  press(); // pnpm passing on what it got
  expect(exits).toEqual([]);
  later(SAME_PRESS_MS);
  press(); // a person pressing again
  expect(exits).toEqual([130]);
});

test('a recording: the first press (arriving twice) asks it to stop and keeps the file; the next stops the CLI', () => {
  let stops = 0;
  const stopped: Interrupt = {};
  stopped.onInterrupt = () => {
    stops += 1;
    stopped.onInterrupt = undefined;
  };
  const { press, controller, exits, later } = setup(stopped);
  press();
  later(50);
  press();
  expect({ stops, aborted: controller.signal.aborted, exits }).toEqual({ stops: 1, aborted: false, exits: [] });
  later(SAME_PRESS_MS + 1);
  press();
  expect(controller.signal.aborted).toBe(true);
  later(SAME_PRESS_MS + 1);
  press();
  expect(exits).toEqual([130]);
});
