export * from './worker.js';
