export * from './address.js';
export * from './body.js';
export * from './egress.js';
