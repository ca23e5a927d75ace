// Redis for every app and package: connections (one Redis, through sentinels, or a cluster), the
// client type, duplicates for blocking reads, readiness, Lua scripts, cluster keys, and which
// failures mean "unavailable". Nothing else constructs an ioredis client.
export * from './client.js';
export * from './connect.js';
export * from './failures.js';
export * from './keys.js';
export * from './scripts.js';
export * from './target.js';
