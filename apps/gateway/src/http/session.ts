// The sign-in session behind the `reelay_session` cookie: HttpOnly (scripts cannot read it),
// SameSite=Lax, Secure whenever the request came over https. Each signed-in request slides the
// session's expiry in Redis and re-sends the cookie, so the two expire together.
import type { Request, RequestHandler, Response } from 'express';
import { DEVICE_COOKIE, DEVICE_TTL_SECONDS, type ClientInfo, type SessionStore } from '@reelay/accounts';
import { ReelayError } from '@reelay/contracts';

export const SESSION_COOKIE = 'reelay_session';

export interface SignedIn {
  accountId: string;
  email: string;
  sessionId: string;
  /** When this session signed in (ms): a recent sign-in may confirm a deletion. */
  signedInAt: number;
}

declare global {
  namespace Express {
    interface Request {
      /** Set by requireSession. */
      signedIn?: SignedIn;
    }
  }
}

/** The value of one cookie of the request, undefined when absent. */
export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function setSessionCookie(req: Request, res: Response, sessionId: string, ttlSeconds: number): void {
  res.cookie(SESSION_COOKIE, sessionId, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: req.secure,
    maxAge: ttlSeconds * 1000,
  });
}

/** The browser's device cookie (devices.ts in @reelay/accounts): sent only to the account routes. */
export function setDeviceCookie(req: Request, res: Response, token: string): void {
  res.cookie(DEVICE_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/account',
    secure: req.secure,
    maxAge: DEVICE_TTL_SECONDS * 1000,
  });
}

export function clearSessionCookie(req: Request, res: Response): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', path: '/', secure: req.secure });
}

/** Account responses are personal: never stored by a browser or proxy cache. */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** What the session list shows of a client: its address and its User-Agent (reduced to a device name). */
export function clientInfo(req: Request): ClientInfo {
  return { ip: req.ip, userAgent: req.get('user-agent') };
}

/** 401 not_signed_in without a live session; otherwise sets req.signedIn. */
export function requireSession(sessions: SessionStore): RequestHandler {
  return async (req, res, next) => {
    const sessionId = readCookie(req, SESSION_COOKIE);
    const session = await sessions.get(sessionId, clientInfo(req));
    if (!session || !sessionId) throw new ReelayError('not_signed_in', 'Sign in first: this needs a session.');
    req.signedIn = { accountId: session.account_id, email: session.email, sessionId, signedInAt: session.created_at };
    setSessionCookie(req, res, sessionId, sessions.ttlSeconds);
    next();
  };
}
