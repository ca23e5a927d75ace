// A job's state and its record are two reads from Redis, and a worker may move the job between them.
// These tests make it do so at exactly that moment (a BullMQ worker of the test's own takes or
// finishes the job when the first state read has answered) and check what a client is shown: never
// "queued again" for a job that has just started (its event id would hide every later event), never
// "expired" for a job that has just completed.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue, Worker, type Job } from 'bullmq';
import { FsArtifactStore } from '@reelay/artifacts';
import { DOWNLOAD_QUEUE } from '@reelay/contracts';
import { testRedisClient } from '@reelay/testkit';
import { jobEventId } from '../src/services/job-event-id.js';
import { JobService } from '../src/services/jobs.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-job-read-'));
const prefix = `{test-job-read-${randomBytes(4).toString('hex')}}`;
const connection = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
let queue: Queue;
let worker: Worker;
let jobs: JobService;
const TOKEN = 'job-read-test';

beforeAll(async () => {
  queue = new Queue(DOWNLOAD_QUEUE, { connection, prefix });
  // No processor: the test takes and finishes jobs by hand, when it chooses.
  worker = new Worker(DOWNLOAD_QUEUE, null, { connection, prefix, autorun: false });
  jobs = new JobService(queue, new FsArtifactStore(dataDir));
});

afterAll(async () => {
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Runs `move` once, right after the next state read has answered and before its caller goes on. */
function afterNextStateRead(move: () => Promise<unknown>): () => void {
  const real = queue.getJobState.bind(queue);
  let moved = false;
  queue.getJobState = async (id: string) => {
    const state = await real(id);
    if (!moved) {
      moved = true;
      await move();
    }
    return state;
  };
  return () => {
    queue.getJobState = real;
  };
}

async function addJob(): Promise<string> {
  const id = randomBytes(16).toString('base64url');
  await queue.add('download', { id, operation: 'convert' }, { jobId: id });
  return id;
}

test('a job taken by a worker between the two reads shows as processing in its first attempt, not queued again', async () => {
  const id = await addJob();
  expect((await jobs.snapshot(id)).view.status).toBe('queued');
  let taken: Job | undefined;
  const restore = afterNextStateRead(async () => (taken = await worker.getNextJob(TOKEN)));
  try {
    const snapshot = await jobs.snapshot(id);
    expect(taken?.id).toBe(id);
    expect(snapshot.view.status).toBe('processing');
    expect(snapshot.attempts).toBe(1);
    // The id of the attempt that has begun, below its completed event's: nothing later is hidden.
    expect(snapshot.eventId).toBe(jobEventId({ status: 'processing', progress: 0 }, 1));
    expect(snapshot.eventId).toBeLessThan(jobEventId({ status: 'completed', progress: 100 }, 1));
  } finally {
    restore();
  }
  await taken!.moveToCompleted(
    { filename: 'a.mp3', content_type: 'audio/mpeg', size: 1, expires_at: Date.now() + 60_000 },
    TOKEN,
    false,
  );
});

test('a job that completes between the two reads shows as it was at the first (processing), never as expired without its file', async () => {
  const id = await addJob();
  const taken = (await worker.getNextJob(TOKEN))!;
  expect(taken.id).toBe(id);
  const result = { filename: 'b.mp3', content_type: 'audio/mpeg', size: 1, expires_at: Date.now() + 60_000 };
  const restore = afterNextStateRead(() => taken.moveToCompleted(result, TOKEN, false));
  try {
    const snapshot = await jobs.snapshot(id);
    expect(snapshot.view.status).toBe('processing');
    expect(snapshot.eventId).toBeLessThan(jobEventId({ status: 'completed', progress: 100 }, 1));
  } finally {
    restore();
  }
  // The completed event that follows reads it whole.
  const after = await jobs.snapshot(id);
  expect(after.view).toMatchObject({ status: 'completed', progress: 100, artifact: { filename: 'b.mp3' } });
  expect(after.eventId).toBe(jobEventId({ status: 'completed', progress: 100 }, 1));
});
