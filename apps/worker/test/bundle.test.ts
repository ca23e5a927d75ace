// The collection's ZIP bundle is an artifact like any other: it never grows past its byte bound.
import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FsArtifactStore } from '@reelay/artifacts';
import { writeBundle } from '../src/bundle.js';

/** A job id of the store's form (22 characters). */
const jobId = (name: string) => name.padEnd(22, 'x');

test('entries are bundled in order while they fit the bound; the rest are left out and counted', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bundle-'));
  try {
    const store = new FsArtifactStore(dir);
    const expires = Date.now() + 60_000;
    for (const [i, size] of [100_000, 100_000, 100_000].entries()) {
      const file = path.join(dir, `in-${i}.m4a`);
      fs.writeFileSync(file, Buffer.alloc(size, i + 1));
      await store.put(jobId(`child${i}`), file, {
        filename: `Episode ${i + 1}.m4a`,
        content_type: 'audio/mp4',
        expires_at: expires,
      });
    }
    const entries = [0, 1, 2].map((i) => ({ index: i + 1, title: `Episode ${i + 1}`, job_id: jobId(`child${i}`) }));
    // Room for two entries and their headers, not three.
    const meta = await writeBundle(store, jobId('parent'), 'Feed', entries, expires, 250_000);
    expect(meta?.left_out).toBe(1);
    expect(meta!.size).toBeLessThanOrEqual(250_000);
    const zip = path.join(dir, 'out.zip');
    const stream = await store.open(jobId('parent'));
    await new Promise<void>((resolve, reject) =>
      stream!
        .pipe(fs.createWriteStream(zip))
        .on('finish', () => resolve())
        .on('error', reject),
    );
    expect(spawnSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).stdout.trim().split('\n')).toEqual([
      '001 - Episode 1.m4a',
      '002 - Episode 2.m4a',
    ]);
    // Without a bound every entry goes in.
    expect((await writeBundle(store, jobId('parent2'), 'Feed', entries, expires))?.left_out).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
