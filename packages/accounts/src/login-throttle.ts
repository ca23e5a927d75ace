// Slows password guessing: failed logins are counted in Redis per account (by e-mail, whether or not
// it exists, so the answer says nothing about which addresses have accounts) and per client IP.
// Past the limit every attempt, even with the right password, is refused until the window ends.
import type { Redis } from 'ioredis';
import { ReelayError } from '@reelay/contracts';
import { ipBucket } from './limits.js';
import { checkResults, guarded, sha256Hex } from './redis.js';

export interface LoginThrottleOptions {
  perAccount?: number;
  /** Higher than per account: many people can share one address (offices, carrier NAT). */
  perIp?: number;
  windowSeconds?: number;
}

export class LoginThrottle {
  private readonly perAccount: number;
  private readonly perIp: number;
  private readonly windowSeconds: number;

  constructor(
    private readonly redis: Redis,
    options: LoginThrottleOptions = {},
    private readonly prefix = 'reelay:login-fail:',
  ) {
    this.perAccount = options.perAccount ?? 5;
    this.perIp = options.perIp ?? 20;
    this.windowSeconds = options.windowSeconds ?? 15 * 60;
  }

  private keys(email: string, ip: string | undefined): [string, string] {
    return [`${this.prefix}account:${sha256Hex(email)}`, `${this.prefix}ip:${ipBucket(ip)}`];
  }

  /** Throws rate_limited (with Retry-After) when the account or the address has failed too often. */
  async check(email: string, ip: string | undefined): Promise<void> {
    const [account, address] = this.keys(email, ip);
    const [accountFails, accountTtl, ipFails, ipTtl] = await guarded(async () =>
      checkResults(await this.redis.pipeline().get(account).pttl(account).get(address).pttl(address).exec()),
    );
    const waits: number[] = [];
    if (Number(accountFails) >= this.perAccount) waits.push(Number(accountTtl));
    if (Number(ipFails) >= this.perIp) waits.push(Number(ipTtl));
    if (waits.length === 0) return;
    const seconds = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    throw new ReelayError('rate_limited', `Too many failed sign-ins; try again in ${seconds} seconds.`, { headers: { 'Retry-After': String(seconds) } });
  }

  /** Counts a failure; the window starts with the first failure (SET NX EX, then INCR, atomically). */
  async failed(email: string, ip: string | undefined): Promise<void> {
    const [account, address] = this.keys(email, ip);
    const ttl = this.windowSeconds;
    await guarded(async () =>
      checkResults(await this.redis.multi().set(account, 0, 'EX', ttl, 'NX').incr(account).set(address, 0, 'EX', ttl, 'NX').incr(address).exec()),
    );
  }

  /**
   * A successful sign-in clears the account's count. The address's count stays: otherwise an attacker
   * could reset it by signing in to an account of their own between guesses.
   */
  async succeeded(email: string): Promise<void> {
    const [account] = this.keys(email, undefined);
    await guarded(() => this.redis.del(account));
  }
}
