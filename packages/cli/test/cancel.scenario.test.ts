// `reelay job ID --cancel` end to end: the built CLI against a real gateway and worker, with a job
// held mid-run by the origin. Exit 0 and the cancelled job on stdout; exit 1 with the server's code
// for a job that has already ended or does not exist.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { runCli, useCliStack } from './helpers.js';

const stack = useCliStack('cancel');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const api = async (path: string, init?: RequestInit): Promise<any> =>
  (await fetch(`${stack.direct}${path}`, init)).json();

/** A convert job whose input the origin sends a third of and then holds: it stays processing. */
async function heldJob(): Promise<string> {
  const data = fs.readFileSync(stack.media.muxedMp4);
  const route = `/held-${randomBytes(3).toString('hex')}.mp4`;
  stack.origin.route(route, (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': data.length });
    res.write(data.subarray(0, Math.floor(data.length / 3))); // and nothing more
  });
  const extract = await api('/api/v1/extract', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: stack.origin.url(route) }),
  });
  const started = await api('/api/v1/download', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: extract.data.media[0].sources[0].url, format: 'mkv' }),
  });
  const id = started.data.job_id as string;
  const deadline = Date.now() + 15_000;
  while ((await api(`/api/v1/jobs/${id}`)).data.status !== 'processing') {
    if (Date.now() > deadline) throw new Error('timed out waiting for the job to run');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return id;
}

describe('reelay job ID --cancel', () => {
  test('cancels a running job: exit 0, "cancelled" on stderr, the cancelled job on stdout', async () => {
    const cwd = stack.workDir();
    const id = await heldJob();
    const run = await runCli(['job', id, '--cancel'], { cwd, server: stack.direct });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`reelay: cancelled job ${id}\n`);
    expect(run.stdout).toMatch(/^status: +cancelled$/m);
    expect((await api(`/api/v1/jobs/${id}`)).data.status).toBe('cancelled');

    // Again: the job has ended, so the server's job_finished, exit 1, nothing on stdout.
    const again = await runCli(['job', id, '--cancel', '--json'], { cwd, server: stack.direct });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/job_finished, HTTP 409/);
  });

  test('an unknown job is exit 1 with job_not_found', async () => {
    const run = await runCli(['job', randomBytes(16).toString('base64url'), '--cancel'], {
      cwd: stack.workDir(),
      server: stack.direct,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/job_not_found, HTTP 404/);
  });
});
