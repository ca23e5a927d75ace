export * from './address.js';
export * from './body.js';
export * from './egress.js';
export * from './host-limit.js';
export * from './proxy-session.js';
export * from './proxy-tunnel.js';
export * from './proxy.js';
