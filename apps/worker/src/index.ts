export * from './https-names.js';
export * from './metrics.js';
export * from './plan.js';
export * from './process.js';
export * from './proxy-session.js';
export * from './proxy.js';
export * from './run.js';
export * from './worker.js';
