// Housekeeping: what a worker clears at start-up and on its timer.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, test } from '@jest/globals';
import { FsArtifactStore } from '@reelay/artifacts';
import { newJobId, startTestWorker, tempDataDir, until } from './helpers.js';

const dataDir = tempDataDir('housekeeping');
const store = new FsArtifactStore(dataDir);

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

async function artifact(expiresAt: number): Promise<string> {
  const id = newJobId();
  const file = path.join(dataDir, `${id}.part`);
  fs.writeFileSync(file, 'media');
  await store.put(id, file, { filename: 'a.mp4', content_type: 'video/mp4', expires_at: expiresAt });
  return id;
}

test('a starting worker removes expired artifacts and temp folders older than two job timeouts, then sweeps on its timer', async () => {
  const expired = await artifact(Date.now() - 1_000);
  const soon = await artifact(Date.now() + 1_500);
  const later = await artifact(Date.now() + 3_600_000);
  const oldTemp = await store.makeTempDir(newJobId());
  const freshTemp = await store.makeTempDir(newJobId());
  const threeMinutesAgo = new Date(Date.now() - 180_000);
  fs.utimesSync(oldTemp, threeMinutesAgo, threeMinutesAgo);

  const worker = await startTestWorker({
    prefix: `reelay-test-housekeeping-${process.pid}`,
    dataDir,
    env: { JOB_TIMEOUT_SECONDS: '60' },
    housekeepingMs: 200,
  });
  try {
    expect(fs.existsSync(oldTemp)).toBe(false);
    await until(async () => (await store.get(expired)) === undefined, 5_000, 'the start-up sweep');
    expect(fs.existsSync(freshTemp)).toBe(true);
    expect(await store.get(soon)).toBeDefined();
    await until(async () => (await store.get(soon)) === undefined, 5_000, 'the timer to sweep');
    expect(await store.get(later)).toBeDefined();
  } finally {
    await worker.stop();
  }
});
