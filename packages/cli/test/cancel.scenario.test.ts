// `reelay job ID --cancel` end to end: the built CLI against a real gateway and worker, with a job
// held mid-run by the origin. A job started by `reelay get` keeps its control token in the user's
// state (XDG_STATE_HOME), so a later run of the same user cancels it: exit 0 and the cancelled job on
// stdout. Another user's CLI, without the token, is refused (exit 1, job_control_forbidden, what to
// do); a job that has already ended or does not exist is exit 1 with the server's code.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { runCli, startCli, stateHome, until, useCliStack } from './helpers.js';

const stack = useCliStack('cancel');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const api = async (path: string, init?: RequestInit): Promise<any> =>
  (await fetch(`${stack.direct}${path}`, init)).json();

/** A page whose one video the origin sends a third of and then holds: its job stays processing. */
function heldPage(): string {
  const data = fs.readFileSync(stack.media.muxedMp4);
  const name = `held-${randomBytes(3).toString('hex')}`;
  stack.origin.route(`/${name}.mp4`, (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': data.length });
    res.write(data.subarray(0, Math.floor(data.length / 3))); // and nothing more
  });
  stack.origin.body(
    `/${name}.html`,
    `<!doctype html><html><head><title>${name}</title></head><body><video><source src="/${name}.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"'></video></body></html>`,
    'text/html',
  );
  return stack.origin.url(`/${name}.html`);
}

/** `reelay get -f mkv PAGE` until the server runs its job, then Ctrl-C (the job goes on); its id. */
async function startedByGet(cwd: string, server = stack.direct): Promise<string> {
  const cli = startCli(['get', '-f', 'mkv', heldPage()], { cwd, server });
  await until(() => /job [A-Za-z0-9_-]{22}/.test(cli.stderr()) || cli.child.exitCode !== null, 20_000, 'the job');
  const id = /job ([A-Za-z0-9_-]{22})/.exec(cli.stderr())![1];
  const deadline = Date.now() + 15_000;
  while ((await api(`/api/v1/jobs/${id}`)).data.status !== 'processing') {
    if (Date.now() > deadline) throw new Error('timed out waiting for the job to run');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  cli.child.kill('SIGINT');
  const run = await cli.done;
  expect(run.code).toBe(130);
  expect(run.stderr).toContain(`job ${id} is still running on the server`);
  expect(run.stderr).toContain(`reelay job ${id} --cancel`);
  return id;
}

describe('reelay job ID --cancel', () => {
  test('cancels a running job that `reelay get` started: exit 0, "cancelled" on stderr, the cancelled job on stdout', async () => {
    const cwd = stack.workDir();
    // Through the recording proxy, which shows what went over the wire.
    const id = await startedByGet(cwd, stack.proxy.base);
    // The token is the user's alone, and nowhere in what the CLI printed.
    const state = path.join(stateHome(cwd), 'reelay', 'jobs.json');
    expect(fs.statSync(state).mode & 0o777).toBe(0o600);
    const [kept] = JSON.parse(fs.readFileSync(state, 'utf8')) as { id: string; token: string }[];
    expect(kept).toMatchObject({ id, token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });

    // A later run of the same user, from another folder: the same state.
    const other = stack.workDir();
    const run = await runCli(['job', id, '--cancel'], {
      cwd: other,
      server: stack.proxy.base,
      env: { XDG_STATE_HOME: stateHome(cwd) },
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`reelay: cancelled job ${id}\n`);
    expect(run.stdout).toMatch(/^status: +cancelled$/m);
    expect(`${run.stdout}${run.stderr}`).not.toContain(kept.token);
    expect((await api(`/api/v1/jobs/${id}`)).data.status).toBe('cancelled');
    // The token went as a header (Authorization: Bearer), never in a URL.
    expect(stack.proxy.seen.filter((r) => r.method === 'DELETE' && r.path.includes(id)).map((r) => r.path)).toEqual([
      `/api/v1/jobs/${id}`,
    ]);
    expect(stack.proxy.seen.filter((r) => r.path.includes(kept.token))).toEqual([]);

    // Again: the job has ended, so the server's job_finished, exit 1, nothing on stdout.
    const again = await runCli(['job', id, '--cancel', '--json'], {
      cwd: other,
      server: stack.proxy.base,
      env: { XDG_STATE_HOME: stateHome(cwd) },
    });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/job_finished, HTTP 409/);
  }, 60_000);

  test("another user's CLI (no token for the job) is refused with what to do, and the job goes on", async () => {
    const cwd = stack.workDir();
    const id = await startedByGet(cwd);
    const stranger = await runCli(['job', id, '--cancel'], { cwd: stack.workDir(), server: stack.direct });
    expect(stranger.code).toBe(1);
    expect(stranger.stdout).toBe('');
    expect(stranger.stderr).toMatch(/job_control_forbidden, HTTP 403/);
    expect(stranger.stderr).toMatch(/reelay: Only the client that started a job can cancel or stop it/);
    expect((await api(`/api/v1/jobs/${id}`)).data.status).toBe('processing');
    const owner = await runCli(['job', id, '--cancel'], { cwd, server: stack.direct });
    expect(owner.code).toBe(0);
  }, 60_000);

  test('an unknown job is exit 1 with job_not_found', async () => {
    const run = await runCli(['job', randomBytes(16).toString('base64url'), '--cancel'], {
      cwd: stack.workDir(),
      server: stack.direct,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/job_not_found, HTTP 404/);
  });
});
