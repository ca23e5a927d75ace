// The S3-compatible artifact store (AWS S3, MinIO, Cloudflare R2, ...): each artifact is two objects,
// `<prefix><id>.bin` then `<prefix><id>.json`, the metadata written last so its presence means done,
// as in the filesystem store. A put overwrites the same keys, so a job run twice stores one artifact.
// Temporary folders stay on local disk: ffmpeg writes files there before the result is uploaded.
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { JOB_ID_PATTERN } from '@reelay/contracts';
import { LocalTemp } from './temp.js';
import {
  ORPHAN_AGE_MS,
  sweepExpired,
  type ArtifactMeta,
  type ArtifactStore,
  type ByteRange,
  type StoredArtifact,
} from './store.js';

export interface S3StoreOptions {
  bucket: string;
  /** Key prefix, e.g. `artifacts/`. */
  prefix: string;
  /** Local folder for per-job temporary files. */
  tempDir: string;
  client: S3ClientConfig;
  /** Multipart part size (default 8 MiB; S3's minimum is 5 MiB). */
  partSize?: number;
}

/**
 * The AWS SDK, loaded on the S3 store's first use: it adds about 40 MB to a process, which every
 * filesystem-store deployment (the default) would otherwise carry for nothing.
 */
type Sdk = typeof import('@aws-sdk/client-s3') &
  Pick<typeof import('@aws-sdk/lib-storage'), 'Upload'> &
  Pick<typeof import('@aws-sdk/s3-request-presigner'), 'getSignedUrl'>;
let sdkLoading: Promise<Sdk> | undefined;
function loadSdk(): Promise<Sdk> {
  sdkLoading ??= Promise.all([
    import('@aws-sdk/client-s3'),
    import('@aws-sdk/lib-storage'),
    import('@aws-sdk/s3-request-presigner'),
  ]).then(([s3, storage, presigner]) => ({
    ...s3,
    Upload: storage.Upload,
    getSignedUrl: presigner.getSignedUrl,
  }));
  return sdkLoading;
}

export class S3ArtifactStore extends LocalTemp implements ArtifactStore {
  readonly bucket: string;
  readonly prefix: string;
  private readonly partSize: number;
  private readonly clientConfig: S3ClientConfig;
  private client?: S3Client;

  constructor(options: S3StoreOptions) {
    super(options.tempDir);
    this.clientConfig = options.client;
    this.bucket = options.bucket;
    this.prefix = options.prefix;
    this.partSize = Math.max(5 * 1024 * 1024, options.partSize ?? 8 * 1024 * 1024);
  }

  /** The SDK and this store's client, both made on first use. */
  private async s3(): Promise<{ sdk: Sdk; client: S3Client }> {
    const sdk = await loadSdk();
    this.client ??= new sdk.S3Client(this.clientConfig);
    return { sdk, client: this.client };
  }

  private keys(id: string): { data: string; meta: string } {
    // Ids are checked so no caller can address another key with a crafted id.
    if (!JOB_ID_PATTERN.test(id)) throw new Error(`invalid artifact id ${JSON.stringify(id)}`);
    return { data: `${this.prefix}${id}.bin`, meta: `${this.prefix}${id}.json` };
  }

  async put(id: string, file: string, meta: Omit<ArtifactMeta, 'id' | 'size'>): Promise<ArtifactMeta> {
    const keys = this.keys(id);
    const { size } = await fs.stat(file);
    const { sdk, client } = await this.s3();
    // lib-storage sends one PUT for a small file and a multipart upload (parts in parallel, aborted
    // on failure) for a large one; a single PUT is limited to 5 GB and retries the whole body.
    const upload = new sdk.Upload({
      client,
      params: {
        Bucket: this.bucket,
        Key: keys.data,
        Body: createReadStream(file),
        ContentType: meta.content_type,
        ContentLength: size,
      },
      partSize: this.partSize,
      queueSize: 4,
      leavePartsOnError: false,
    });
    await upload.done();
    const full: ArtifactMeta = { id, size, ...meta };
    await client.send(
      new sdk.PutObjectCommand({
        Bucket: this.bucket,
        Key: keys.meta,
        Body: JSON.stringify(full),
        ContentType: 'application/json',
      }),
    );
    // The local file has been uploaded: remove it now rather than with the job's folder.
    await fs.rm(file, { force: true });
    return full;
  }

  async get(id: string): Promise<StoredArtifact | undefined> {
    if (!JOB_ID_PATTERN.test(id)) return undefined;
    const body = await this.read(this.keys(id).meta);
    if (body === undefined) return undefined;
    const meta = JSON.parse(Buffer.from(await body.transformToByteArray()).toString('utf8')) as ArtifactMeta;
    return { meta };
  }

  async open(id: string, range?: ByteRange): Promise<Readable | undefined> {
    const body = await this.read(this.keys(id).data, range ? `bytes=${range.start}-${range.end}` : undefined);
    return body as Readable | undefined;
  }

  async signedUrl(
    meta: ArtifactMeta,
    options: { expiresInSeconds: number; contentDisposition: string },
  ): Promise<string> {
    const { sdk, client } = await this.s3();
    const command = new sdk.GetObjectCommand({
      Bucket: this.bucket,
      Key: this.keys(meta.id).data,
      ResponseContentDisposition: options.contentDisposition,
      ResponseContentType: meta.content_type,
      ResponseCacheControl: 'private, no-store',
    });
    return sdk.getSignedUrl(client, command, { expiresIn: options.expiresInSeconds });
  }

  async remove(id: string): Promise<void> {
    const keys = this.keys(id);
    // Metadata first: once it is gone the artifact is no longer served, even if the data lingers.
    await this.deleteKeys([keys.meta]);
    await this.deleteKeys([keys.data]);
  }

  async sweep(now = Date.now()): Promise<number> {
    const objects = await this.list();
    const modified = new Map(objects.map((o) => [o.name, o.modified]));
    const { removed, withoutMeta } = await sweepExpired(this, [...modified.keys()], now);
    const orphans = withoutMeta.filter((name) => {
      const at = modified.get(name);
      return at !== undefined && now - at > ORPHAN_AGE_MS;
    });
    if (orphans.length > 0) await this.deleteKeys(orphans.map((name) => `${this.prefix}${name}`));
    return removed;
  }

  close(): void {
    this.client?.destroy();
  }

  /** An object's body, or undefined when there is no such key. */
  private async read(
    key: string,
    range?: string,
  ): Promise<(Readable & { transformToByteArray(): Promise<Uint8Array> }) | undefined> {
    const { sdk, client } = await this.s3();
    try {
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range }));
      return out.Body as Readable & { transformToByteArray(): Promise<Uint8Array> };
    } catch (err) {
      if (
        err instanceof sdk.NoSuchKey ||
        (err instanceof sdk.S3ServiceException && err.$metadata.httpStatusCode === 404)
      )
        return undefined;
      throw err;
    }
  }

  /** Every object under the prefix: its name after the prefix and when it was written. */
  private async list(): Promise<{ name: string; modified?: number }[]> {
    const { sdk, client } = await this.s3();
    const out: { name: string; modified?: number }[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? [])
        if (o.Key) out.push({ name: o.Key.slice(this.prefix.length), modified: o.LastModified?.getTime() });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  private async deleteKeys(keys: string[]): Promise<void> {
    const { sdk, client } = await this.s3();
    // DeleteObjects takes at most 1000 keys.
    for (let i = 0; i < keys.length; i += 1000) {
      const out = await client.send(
        new sdk.DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
        }),
      );
      if (out.Errors?.length)
        throw new Error(
          `S3 could not delete ${out.Errors.length} object(s): ${out.Errors[0].Code ?? ''} ${out.Errors[0].Message ?? ''}`,
        );
    }
  }
}
