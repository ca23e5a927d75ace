// Ctrl-C typed into `pnpm reelay get …` in a terminal, as a person runs it from the repository: the
// terminal's SIGINT reaches pnpm, its shell and the CLI at once, and pnpm passes its own on. The CLI
// must stop once, say how to come back to the job or cancel it, and pnpm must report its 130.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { expect, test } from '@jest/globals';
import { runInPty } from '@reelay/testkit';
import { ROOT, useCliStack } from './helpers.js';

const stack = useCliStack('pnpm-ctrl-c');

/** A page whose one file the origin sends a third of and then holds: its job stays processing. */
function heldPage(): string {
  const data = fs.readFileSync(stack.media.muxedMp4);
  const name = `held-${randomBytes(3).toString('hex')}`;
  stack.origin.route(`/${name}.mp4`, (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': data.length });
    res.write(data.subarray(0, Math.floor(data.length / 3))); // and nothing more
  });
  stack.origin.body(
    `/${name}.html`,
    `<!doctype html><title>${name}</title><video src="/${name}.mp4"></video>`,
    'text/html',
  );
  return stack.origin.url(`/${name}.html`);
}

test('Ctrl-C on `pnpm reelay get` stops once, says how to cancel the job, and exits 130 through pnpm', async () => {
  const cwd = stack.workDir();
  const run = runInPty('pnpm', ['--dir', ROOT, 'reelay', 'get', heldPage(), '-f', 'mkv'], {
    cwd,
    env: { PATH: process.env.PATH, HOME: os.homedir(), REELAY_SERVER: stack.direct, NO_COLOR: '1' },
  });
  try {
    await run.waitFor(/the server is making the file: job \S{22}/, 60_000);
    const id = /job (\S{22})/.exec(run.output())![1];
    run.type('\x03');
    const { code, signal, output } = await run.done;
    // Exited with the documented status, not killed by the signal (pnpm re-raises a signal it saw kill its script).
    expect({ code, signal }).toEqual({ code: 130, signal: undefined });
    expect(output).toContain('reelay: stopped.');
    expect(output).toContain(
      `reelay: job ${id} is still running on the server: the same command picks it up again, \`reelay job ${id} --cancel\` cancels it.`,
    );
    expect(output.split('reelay: stopped.').length).toBe(2);
    // Stopping the CLI left the job alone.
    const job = (await (await fetch(`${stack.direct}/api/v1/jobs/${id}`)).json()) as { data: { status: string } };
    expect(job.data.status).toBe('processing');
    expect(fs.readdirSync(cwd)).toEqual([]);
  } finally {
    run.kill();
  }
}, 90_000);
