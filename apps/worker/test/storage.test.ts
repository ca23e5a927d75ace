// A store that cannot be written fails jobs as storage_error, saying which folder, instead of
// "ffmpeg could not process the media". Tests run as root, which ignores permission bits, so the
// folders are made unusable for real by putting a regular file where the folder should be: mkdir,
// readdir and rename then fail with ENOTDIR or EEXIST whoever the user is.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, test } from '@jest/globals';
import { S3ArtifactStore } from '@reelay/artifacts';
import { decodeJobError } from '@reelay/contracts';
import { freePort } from '@reelay/testkit';
import { payload, sampleSum, startTestWorker, TestQueue, useWorkerStack } from './helpers.js';

const stack = useWorkerStack('storage');

/** Puts a regular file where the folder `name` of DATA_DIR was; put back after each test. */
function breakFolder(name: 'artifacts' | 'tmp'): void {
  fs.rmSync(path.join(stack.dataDir, name), { recursive: true, force: true });
  fs.writeFileSync(path.join(stack.dataDir, name), 'not a folder');
}

afterEach(() => {
  for (const name of ['artifacts', 'tmp']) {
    const full = path.join(stack.dataDir, name);
    if (fs.existsSync(full) && !fs.statSync(full).isDirectory()) fs.rmSync(full);
  }
});

async function failure(attempts = 1) {
  const job = payload(
    [{ url: stack.origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive', codecs: 'avc1.42c00d,mp4a.40.2' }],
    { format: 'mkv', duration: 2 },
  );
  await stack.queue.add(job, { attempts, backoff: { type: 'fixed', delay: 50 } });
  const done = await stack.queue.finished(job.id);
  return { state: await done.getState(), error: decodeJobError(done.failedReason), attemptsMade: done.attemptsMade };
}

test('an artifact folder that cannot be used fails the job as storage_error, naming the artifact store', async () => {
  breakFolder('artifacts');
  expect(await failure()).toEqual({
    state: 'failed',
    error: { code: 'storage_error', message: 'The result could not be stored: the artifact store is not a folder.' },
    attemptsMade: 1,
  });
});

test("a temp folder that cannot be used fails the job as storage_error, naming the worker's temporary folder, without retries", async () => {
  breakFolder('tmp');
  expect(await failure(3)).toEqual({
    state: 'failed',
    error: {
      code: 'storage_error',
      message: "The result could not be stored: the worker's temporary folder is not a folder.",
    },
    attemptsMade: 1,
  });
});

test('/metrics counts the failures by error code', async () => {
  const text = await (await fetch(`${stack.worker.metricsUrl}/metrics`)).text();
  expect(sampleSum(text, 'reelay_jobs_total', { operation: 'convert', error_code: 'storage_error' })).toBe(2);
});

test('once the folder is usable again jobs complete', async () => {
  const job = payload(
    [{ url: stack.origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive', codecs: 'avc1.42c00d,mp4a.40.2' }],
    { format: 'mkv', duration: 2 },
  );
  await stack.queue.add(job);
  expect(await (await stack.queue.finished(job.id)).getState()).toBe('completed');
});

test('an S3 store that cannot be reached fails the job as storage_error after its retries, not as an internal error', async () => {
  // Nothing listens on this port: the upload is refused, as with a store that is down.
  const store = new S3ArtifactStore({
    bucket: 'reelay',
    prefix: 'artifacts/',
    tempDir: path.join(stack.dataDir, 's3-tmp'),
    client: {
      endpoint: `http://127.0.0.1:${await freePort()}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    },
  });
  const prefix = `${stack.prefix}-s3`;
  const worker = await startTestWorker({ prefix, dataDir: stack.dataDir, artifacts: store });
  const queue = new TestQueue(prefix);
  try {
    const job = payload(
      [{ url: stack.origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive', codecs: 'avc1.42c00d,mp4a.40.2' }],
      { format: 'mkv', duration: 2 },
    );
    await queue.add(job, { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
    const done = await queue.finished(job.id);
    expect({
      state: await done.getState(),
      error: decodeJobError(done.failedReason),
      attemptsMade: done.attemptsMade,
    }).toEqual({
      state: 'failed',
      error: {
        code: 'storage_error',
        message: 'The result could not be stored: the artifact store did not accept the file.',
      },
      attemptsMade: 2,
    });
  } finally {
    await worker.stop();
    await queue.close();
  }
});
