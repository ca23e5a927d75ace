// Artifacts on another mount than the temp folder: rename() fails with EXDEV there, so put() copies.
// /dev/shm (tmpfs) and the OS temp folder are different devices on this machine and on CI; where
// they are not, the test is skipped rather than passing without exercising the copy.
import { afterAll, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FsArtifactStore } from '../src/index.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-artifacts-xdev-'));
const otherMount = fs.existsSync('/dev/shm') ? fs.mkdtempSync('/dev/shm/reelay-artifacts-') : undefined;
const crossDevice = otherMount !== undefined && fs.statSync(otherMount).dev !== fs.statSync(dataDir).dev;

afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (otherMount) fs.rmSync(otherMount, { recursive: true, force: true });
});

(crossDevice ? test : test.skip)(
  'an artifact folder on another mount than the temp folder still receives the finished file',
  async () => {
    // The store's artifacts folder is a link to the other mount, as a volume mounted there would be.
    fs.symlinkSync(otherMount!, path.join(dataDir, 'artifacts'));
    const store = new FsArtifactStore(dataDir);
    const id = randomBytes(16).toString('base64url');
    const dir = await store.makeTempDir(id);
    const file = path.join(dir, 'out.mp4');
    const content = randomBytes(300_000);
    fs.writeFileSync(file, content);
    // The plain rename the store used to do fails here: this test exercises the copy.
    expect(() => fs.linkSync(file, path.join(otherMount!, 'probe'))).toThrow(/EXDEV/);

    const meta = await store.put(id, file, {
      filename: 'clip.mp4',
      content_type: 'video/mp4',
      expires_at: Date.now() + 60_000,
    });
    expect(meta.size).toBe(content.length);
    const stored = await store.get(id);
    expect(fs.readFileSync(stored!.path).equals(content)).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
    // Only the artifact and its metadata are left: no half-copied file beside them.
    expect(fs.readdirSync(otherMount!).sort()).toEqual([`${id}.bin`, `${id}.json`]);
  },
);
