// The artifact store: finished job files shared by workers (which write) and gateways (which serve).
// Two implementations behind one interface: a directory on a shared volume, or an S3-compatible bucket.
export * from './store.js';
export { FsArtifactStore } from './fs-store.js';
export { S3ArtifactStore, type S3StoreOptions } from './s3-store.js';
export { createArtifactStore, type ArtifactStoreSettings } from './create.js';
