// A job that goes back to the queue for another attempt shows no progress of the attempt that
// ended: a user polling it sees `queued` at 0, not `queued` at 40 %.
import fs from 'node:fs';
import { expect, test } from '@jest/globals';
import { Job } from 'bullmq';
import { payload, until, useWorkerStack } from './helpers.js';

const stack = useWorkerStack('requeue', { serveMedia: false });

test('a job whose attempt failed and waits for its retry shows progress 0 again', async () => {
  // The first answer sends part of the file slowly, then breaks the connection (a reset: worth a
  // retry); the wait before the retry is long enough to look at the job.
  const data = fs.readFileSync(stack.media.muxedMp4);
  let cut = false;
  stack.origin.route('/flaky.mp4', (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': data.length });
    let sent = 0;
    const timer = setInterval(() => {
      if (cut) {
        clearInterval(timer);
        res.destroy();
        return;
      }
      const n = Math.min(Math.ceil(data.length / 40), data.length - sent - 1); // never the last byte
      res.write(data.subarray(sent, sent + n));
      sent += n;
    }, 50);
    res.on('close', () => clearInterval(timer));
  });
  const job = payload(
    [{ url: stack.origin.url('/flaky.mp4'), stream_profile: 'muxed_progressive', codecs: 'avc1.42c00d,mp4a.40.2' }],
    { format: 'mkv', duration: 2 },
  );
  await stack.queue.add(job, { attempts: 2, backoff: { type: 'fixed', delay: 60_000 } });
  const progress = async () => (await Job.fromId(stack.queue.queue, job.id))?.progress;

  await until(
    async () => typeof (await progress()) === 'number' && ((await progress()) as number) > 0,
    10_000,
    'progress above 0',
  );
  cut = true;
  await until(async () => (await stack.queue.state(job.id)) === 'delayed', 10_000, 'the job to wait for its retry');
  expect(await progress()).toBe(0);
  await stack.queue.queue.remove(job.id);
});
