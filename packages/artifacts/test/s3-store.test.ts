import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createArtifactStore, S3ArtifactStore } from '../src/index.js';
import { S3RVER_CREDENTIALS, startS3, type S3Handle } from '@reelay/testkit';

let s3: S3Handle;
let store: S3ArtifactStore;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-s3-store-'));
const newId = () => randomBytes(16).toString('base64url').slice(0, 22);

async function bytes(stream: Readable | undefined): Promise<Buffer> {
  if (!stream) throw new Error('no stream');
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Uint8Array));
  return Buffer.concat(chunks);
}

async function tempFile(data: Buffer, id: string): Promise<string> {
  const dir = await store.makeTempDir(id);
  const file = path.join(dir, 'output.part');
  fs.writeFileSync(file, data);
  return file;
}

beforeAll(async () => {
  s3 = await startS3();
  store = new S3ArtifactStore({
    bucket: s3.bucket,
    prefix: 'artifacts/',
    tempDir: path.join(dataDir, 'tmp'),
    partSize: 5 * 1024 * 1024,
    client: { endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: S3RVER_CREDENTIALS },
  });
});

afterAll(async () => {
  store.close();
  await s3.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('S3 artifact store', () => {
  test('a stored artifact reads back whole and by byte range, and its local file is gone after the upload', async () => {
    const id = newId();
    const data = randomBytes(200_000);
    const file = await tempFile(data, id);
    const meta = await store.put(id, file, {
      filename: 'clip.mp4',
      content_type: 'video/mp4',
      expires_at: Date.now() + 60_000,
    });
    expect(meta).toMatchObject({ id, size: data.length, filename: 'clip.mp4' });
    expect(fs.existsSync(file)).toBe(false);
    expect((await store.get(id))?.meta).toEqual(meta);
    expect((await bytes(await store.open(id))).equals(data)).toBe(true);
    expect((await bytes(await store.open(id, { start: 1000, end: 1999 }))).equals(data.subarray(1000, 2000))).toBe(
      true,
    );
  });

  test('a file larger than one part is uploaded in parts and reads back byte-identical', async () => {
    const id = newId();
    const data = randomBytes(11 * 1024 * 1024 + 123);
    const meta = await store.put(id, await tempFile(data, id), {
      filename: 'big.mkv',
      content_type: 'video/x-matroska',
      expires_at: Date.now() + 60_000,
    });
    expect(meta.size).toBe(data.length);
    expect((await bytes(await store.open(id))).equals(data)).toBe(true);
    const tail = await bytes(await store.open(id, { start: data.length - 10, end: data.length - 1 }));
    expect(tail.equals(data.subarray(data.length - 10))).toBe(true);
  });

  test('storing the same job id twice leaves one artifact, the later one', async () => {
    const id = newId();
    await store.put(id, await tempFile(Buffer.from('first run'), id), {
      filename: 'a.mp4',
      content_type: 'video/mp4',
      expires_at: Date.now() + 60_000,
    });
    await store.put(id, await tempFile(Buffer.from('second run!'), id), {
      filename: 'a.mp4',
      content_type: 'video/mp4',
      expires_at: Date.now() + 60_000,
    });
    expect((await store.get(id))?.meta.size).toBe(11);
    expect((await bytes(await store.open(id))).toString()).toBe('second run!');
  });

  test('an unknown or malformed id reads as no artifact, and a malformed id cannot be written', async () => {
    expect(await store.get(newId())).toBeUndefined();
    expect(await store.open(newId())).toBeUndefined();
    expect(await store.get('../../etc/passwd')).toBeUndefined();
    await expect(
      store.put('../x', path.join(dataDir, 'none'), { filename: 'x', content_type: 'x', expires_at: 0 }),
    ).rejects.toThrow('invalid artifact id');
  });

  test('the sweep removes expired artifacts and keeps live ones', async () => {
    const live = newId();
    const old = newId();
    await store.put(live, await tempFile(Buffer.from('live'), live), {
      filename: 'l',
      content_type: 'video/mp4',
      expires_at: Date.now() + 60_000,
    });
    await store.put(old, await tempFile(Buffer.from('old'), old), {
      filename: 'o',
      content_type: 'video/mp4',
      expires_at: Date.now() - 1,
    });
    expect(await store.sweep()).toBeGreaterThanOrEqual(1);
    expect(await store.get(old)).toBeUndefined();
    expect(await store.open(old)).toBeUndefined();
    expect((await bytes(await store.open(live))).toString()).toBe('live');
  });

  test('a presigned URL serves the file with its download name, also by range', async () => {
    const id = newId();
    const data = randomBytes(5000);
    const meta = await store.put(id, await tempFile(data, id), {
      filename: 'clip.mp4',
      content_type: 'video/mp4',
      expires_at: Date.now() + 60_000,
    });
    const url = await store.signedUrl(meta, {
      expiresInSeconds: 60,
      contentDisposition: 'attachment; filename="clip.mp4"',
    });
    expect(url).toContain('X-Amz-Expires=60');
    const res = await fetch(url, { headers: { range: 'bytes=10-19' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="clip.mp4"');
    expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(10, 20))).toBe(true);
  });

  test("a job's temporary folders stay on local disk and are removed per job id", async () => {
    const id = newId();
    const other = newId();
    const a = await store.makeTempDir(id);
    const b = await store.makeTempDir(id);
    const keep = await store.makeTempDir(other);
    expect(a.startsWith(path.join(dataDir, 'tmp'))).toBe(true);
    expect(await store.removeTemp(id)).toBe(2);
    expect([fs.existsSync(a), fs.existsSync(b), fs.existsSync(keep)]).toEqual([false, false, true]);
    await store.removeTempDir(keep);
    expect(fs.existsSync(keep)).toBe(false);
    await expect(store.removeTempDir(dataDir)).rejects.toThrow('not a temporary folder');
  });

  test('ARTIFACT_STORE=s3 builds an S3 store from the configuration', () => {
    const made = createArtifactStore({
      DATA_DIR: dataDir,
      ARTIFACT_STORE: 's3',
      S3_BUCKET: 'b-1',
      S3_REGION: 'eu-west-1',
      S3_PREFIX: 'p/',
      S3_FORCE_PATH_STYLE: true,
    });
    expect(made).toBeInstanceOf(S3ArtifactStore);
    expect((made as S3ArtifactStore).prefix).toBe('p/');
    made.close?.();
  });
});
