export * from './app.js';
export { GatewayMetrics } from './metrics.js';
export { answerClientErrors } from './http/client-error.js';
