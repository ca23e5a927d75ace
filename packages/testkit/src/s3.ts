// A private S3-compatible server for tests (s3rver: objects in a temp folder), on 127.0.0.1 and a
// free port, with one bucket made. The artifact store talks to it exactly as to MinIO or AWS S3.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// @ts-expect-error s3rver ships no type declarations; the few calls below are typed by S3rverLike.
import S3rverModule from 's3rver';

interface S3rverLike {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
const S3rver = S3rverModule as new (options: Record<string, unknown>) => S3rverLike;

export interface S3Handle {
  endpoint: string;
  bucket: string;
  /** The environment a gateway or worker needs to use this server as its artifact store. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** s3rver accepts only its own fixed key pair. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startS3(bucket = 'reelay-test'): Promise<S3Handle> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: {
      ARTIFACT_STORE: 's3',
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_BUCKET: bucket,
      S3_PREFIX: 'artifacts/',
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    },
    stop: async () => {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
