export * from './fixtures.js';
export * from './media.js';
export * from './origin.js';
export * from './redis.js';
export * from './s3.js';
