export * from './app.js';
export { GatewayMetrics } from './metrics.js';
export * from './redis.js';
