// Accounts, sessions, API keys, usage and surface A's limits, all kept in Redis so every gateway
// replica sees the same state.
import type { Redis } from 'ioredis';
import { AccountStore } from './accounts.js';
import { KeyStore } from './keys.js';
import { SurfaceGate, type SurfaceLimits } from './limits.js';
import { LoginThrottle, type LoginThrottleOptions } from './login-throttle.js';
import { SessionStore } from './sessions.js';
import { SignupLimit, type SignupLimitOptions } from './signup-limit.js';
import { UsageCounter } from './usage.js';

export * from './accounts.js';
export * from './keys.js';
export * from './limits.js';
export * from './login-throttle.js';
export * from './password.js';
// The gateway's other Redis limits (jobs per client) run their scripts the same way.
export { luaScript, runScript } from './redis.js';
export * from './schemas.js';
export * from './sessions.js';
export * from './signup-limit.js';
export * from './usage.js';

export interface AccountServices {
  accounts: AccountStore;
  sessions: SessionStore;
  keys: KeyStore;
  usage: UsageCounter;
  gate: SurfaceGate;
}

export function createAccountServices(redis: Redis, options: { limits: SurfaceLimits; login?: LoginThrottleOptions; signup?: SignupLimitOptions; sessionTtlSeconds?: number }): AccountServices {
  return {
    accounts: new AccountStore(redis, new LoginThrottle(redis, options.login), new SignupLimit(redis, options.signup)),
    sessions: new SessionStore(redis, options.sessionTtlSeconds),
    keys: new KeyStore(redis),
    usage: new UsageCounter(redis),
    gate: new SurfaceGate(redis, options.limits),
  };
}
