// How many reset mails anyone can make an address receive (POST /account/password/forgot), counted so
// that a stranger cannot use up the owner's budget (DESIGN.md "Limits are atomic"). Per hour:
// - per requester (client address): REQUESTER requests, whatever the addresses;
// - per requester and address: PER_REQUESTER_AND_ADDRESS mails, so one stranger takes little;
// - per address, from requesters not recognised as its owner: PER_ADDRESS mails, so many strangers
//   together cannot flood the inbox;
// - a requester recognised as the owner (a browser that signed in to the account: devices.ts) counts
//   per device and address instead, outside the address's budget, so the owner still gets a reset mail
//   while strangers have used it all up.
// Buckets are charged in that order and the first one over its limit refuses, so a stranger refused
// per requester-and-address has not charged the address's budget.
import { type RedisClient } from '@reelay/redis';
import { sha256Hex } from './redis-calls.js';
import { chargeBuckets, type Bucket } from './entry-limit.js';
import { ipBucket } from './limits.js';

export const MAIL_BUDGET = {
  windowSeconds: 3600,
  requester: 20,
  perRequesterAndAddress: 3,
  perAddress: 10,
  perOwnerDevice: 3,
};

export class MailBudget {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = 'reelay:entry:forgot:',
  ) {}

  /** Counts one reset mail to `email` asked by `ip`; `ownerDevice` when the request came from a known browser. */
  async charge(request: { ip: string | undefined; email: string; ownerDevice?: string }): Promise<void> {
    const ip = ipBucket(request.ip);
    const address = sha256Hex(request.email);
    const buckets: Bucket[] = [{ key: `${this.prefix}ip:${ip}`, limit: MAIL_BUDGET.requester }];
    if (request.ownerDevice !== undefined)
      buckets.push({
        key: `${this.prefix}device:${sha256Hex(request.ownerDevice)}:${address}`,
        limit: MAIL_BUDGET.perOwnerDevice,
      });
    else
      buckets.push(
        { key: `${this.prefix}ip-account:${ip}:${address}`, limit: MAIL_BUDGET.perRequesterAndAddress },
        { key: `${this.prefix}account:${address}`, limit: MAIL_BUDGET.perAddress },
      );
    await chargeBuckets(this.redis, buckets, MAIL_BUDGET.windowSeconds);
  }
}
