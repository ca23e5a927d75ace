// What the account route files share: the error responses they document, the success envelope, the
// signed-in account of a request, and the one "start a session" call every way of signing in ends in.
import type { Request, Response } from 'express';
import { DEVICE_COOKIE, type Account, type AccountServices } from '@reelay/accounts';
import { ErrorEnvelopeSchema, ReelayError } from '@reelay/contracts';
import {
  clientInfo,
  readCookie,
  SESSION_COOKIE,
  setDeviceCookie,
  setSessionCookie,
  type SignedIn,
} from '../http/session.js';
import type { GatewayMetrics } from '../metrics.js';

export const error = (description: string) => ({ description, schema: ErrorEnvelopeSchema });
export const CROSS_SITE = { 403: error('cross_site_request: the Origin or Sec-Fetch-Site is another site') };
export const NOT_SIGNED_IN = { 401: error('not_signed_in: no live session cookie') };
export const KEY_NOT_FOUND = {
  400: error('invalid_request: malformed percent-encoding in the id'),
  404: error('not_found: no key with this id in the account'),
};
export const BAD_BODY = {
  400: error('invalid_request'),
  413: error('payload_too_large: the body is over 16 KiB'),
  415: error('unsupported_media_type'),
};
export const KEY_ID = { id: 'The key id' };
export const UNAVAILABLE = { 503: error('service_unavailable: Redis cannot be reached') };
export const RATE_LIMITED = {
  429: {
    ...error('rate_limited: too many attempts from this address or for this account'),
    headers: { 'Retry-After': 'Seconds to wait' },
  },
};
/** The success envelope every route answers with. */
export const ok = <T>(data: T) => ({ success: true as const, data });

export function signedIn(req: Request): SignedIn {
  if (!req.signedIn) throw new Error('route registered without requireSession');
  return req.signedIn;
}

/** The signed-in account as the stores name it. */
export function accountOf(req: Request): Account {
  const { accountId, email } = signedIn(req);
  return { id: accountId, email };
}

/**
 * Signs the client in with a fresh session id (any session it had before is ended), and remembers the
 * browser as one of the account's (the reelay_device cookie: the mail budget tells the owner by it).
 */
export async function startSession(
  services: Pick<AccountServices, 'sessions' | 'devices'>,
  req: Request,
  res: Response,
  account: Account,
): Promise<void> {
  const { sessions, devices } = services;
  await sessions.destroy(readCookie(req, SESSION_COOKIE));
  setSessionCookie(req, res, await sessions.create(account, clientInfo(req)), sessions.ttlSeconds);
  setDeviceCookie(req, res, await devices.remember(account.id, readCookie(req, DEVICE_COOKIE)));
}

/** Counts a refusal for being over a limit in the metrics, then lets the error answer. */
export const countRateLimited =
  (metrics: GatewayMetrics, surface: string) =>
  (err: unknown): never => {
    if (err instanceof ReelayError && err.code === 'rate_limited') metrics.rateLimited.inc({ surface });
    throw err;
  };
