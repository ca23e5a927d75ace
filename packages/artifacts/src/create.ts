// Builds the configured artifact store, so the gateway and the worker pick the same one.
import path from 'node:path';
import { FsArtifactStore } from './fs-store.js';
import { S3ArtifactStore } from './s3-store.js';
import type { ArtifactStore } from './store.js';

/** The configuration this needs (a subset of @reelay/config's Config). */
export interface ArtifactStoreSettings {
  DATA_DIR: string;
  ARTIFACT_STORE: 'fs' | 's3';
  S3_ENDPOINT?: string;
  S3_REGION: string;
  S3_BUCKET?: string;
  S3_PREFIX: string;
  S3_FORCE_PATH_STYLE: boolean;
  AWS_ACCESS_KEY_ID?: string;
  AWS_SECRET_ACCESS_KEY?: string;
  AWS_SESSION_TOKEN?: string;
}

export function createArtifactStore(config: ArtifactStoreSettings, dataDir = config.DATA_DIR): ArtifactStore {
  if (config.ARTIFACT_STORE !== 's3') return new FsArtifactStore(dataDir);
  if (!config.S3_BUCKET) throw new Error('S3_BUCKET is required when ARTIFACT_STORE=s3');
  return new S3ArtifactStore({
    bucket: config.S3_BUCKET,
    prefix: config.S3_PREFIX,
    tempDir: path.join(dataDir, 'tmp'),
    client: {
      region: config.S3_REGION,
      endpoint: config.S3_ENDPOINT,
      forcePathStyle: config.S3_FORCE_PATH_STYLE,
      // Only when configured: otherwise the SDK's own chain (shared profile, instance role) applies.
      credentials: config.AWS_ACCESS_KEY_ID
        ? {
            accessKeyId: config.AWS_ACCESS_KEY_ID,
            secretAccessKey: config.AWS_SECRET_ACCESS_KEY ?? '',
            sessionToken: config.AWS_SESSION_TOKEN,
          }
        : undefined,
      // S3 answers in well under this; a stuck connection must not hold a job or a request forever.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
      maxAttempts: 3,
    },
  });
}
