export * from './errors.js';
export * from './extract.js';
export * from './url.js';
export * from './sources.js';
export * from './download.js';
export * from './worker-health.js';
