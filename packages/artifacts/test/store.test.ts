import { afterAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FsArtifactStore } from '../src/index.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-artifacts-'));
const store = new FsArtifactStore(dataDir);
const newId = () => randomBytes(16).toString('base64url');

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

async function putFile(id: string, content: string, expiresAt: number) {
  const dir = await store.makeTempDir(id);
  const file = path.join(dir, 'out.mp4');
  fs.writeFileSync(file, content);
  return store.put(id, file, { filename: 'clip.mp4', content_type: 'video/mp4', expires_at: expiresAt });
}

describe('the filesystem artifact store', () => {
  test('a put artifact can be read back with its size and metadata', async () => {
    const id = newId();
    const meta = await putFile(id, 'hello', Date.now() + 60_000);
    expect(meta).toMatchObject({ id, size: 5, filename: 'clip.mp4', content_type: 'video/mp4' });
    const stored = await store.get(id);
    expect(stored?.meta).toEqual(meta);
    expect(fs.readFileSync(stored!.path, 'utf8')).toBe('hello');
  });

  test('unknown and malformed ids are simply absent', async () => {
    expect(await store.get(newId())).toBeUndefined();
    expect(await store.get('../../etc/passwd')).toBeUndefined();
    await expect(store.remove('../x')).rejects.toThrow(/invalid artifact id/);
  });

  test('the sweeper removes expired artifacts and keeps live ones', async () => {
    const expired = newId();
    const live = newId();
    await putFile(expired, 'old', Date.now() - 1);
    await putFile(live, 'new', Date.now() + 60_000);
    // Every other artifact of this file is live, so exactly the expired one goes.
    expect(await store.sweep()).toBe(1);
    expect(await store.get(expired)).toBeUndefined();
    expect(fs.existsSync(path.join(store.artifactsDir, `${expired}.bin`))).toBe(false);
    expect(await store.get(live)).toBeDefined();
  });

  test('temp folders older than the limit are cleaned, fresh ones kept', async () => {
    const stale = await store.makeTempDir(newId());
    const fresh = await store.makeTempDir(newId());
    const past = new Date(Date.now() - 10 * 60_000);
    fs.utimesSync(stale, past, past);
    expect(await store.cleanTemp(5 * 60_000)).toBe(1);
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(fresh)).toBe(true);
  });
});
