// Collection cursors: the next page's start (extractor, its state, entries listed so far), signed
// with HMAC-SHA256 over the collection's URL and the payload, so a cursor cannot be edited, forged, or
// replayed against another URL to reach another site's listing. Opaque to clients: payload.tag, both
// base64url; the URL is signed, not carried, so a cursor stays short.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ReelayError } from '@reelay/contracts';
import type { PageRef } from '@reelay/extractors';

const CONTEXT = 'reelay collection cursor v1\n';

interface Payload {
  v: 1;
  x: string;
  s: string;
  i: number;
  p: number;
}

export class CursorSigner {
  private readonly key: Buffer;

  /** `secret`: COLLECTION_CURSOR_SECRET; without one, a random key for this process's life. */
  constructor(secret?: string) {
    this.key = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  }

  sign(url: string, page: PageRef): string {
    const payload: Payload = { v: 1, x: page.extractor, s: page.state, i: page.index, p: page.page };
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${body}.${this.tag(url, body).toString('base64url')}`;
  }

  /** The page a cursor names, if it is one this service signed for exactly this URL; else 400. */
  verify(url: string, cursor: string): PageRef {
    const refuse = () =>
      new ReelayError(
        'invalid_request',
        'The cursor is not valid for this URL: pass a next_cursor exactly as an extract of this same url returned it.',
      );
    const m = /^([A-Za-z0-9_-]{1,4000})\.([A-Za-z0-9_-]{43})$/.exec(cursor);
    if (!m) throw refuse();
    const given = Buffer.from(m[2], 'base64url');
    const expected = this.tag(url, m[1]);
    // Only the canonical spelling: base64url's last character has spare bits another letter could set.
    if (given.length !== expected.length || given.toString('base64url') !== m[2] || !timingSafeEqual(given, expected))
      throw refuse();
    let payload: Partial<Payload>;
    try {
      payload = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8')) as Partial<Payload>;
    } catch {
      throw refuse();
    }
    const valid =
      payload.v === 1 &&
      typeof payload.x === 'string' &&
      typeof payload.s === 'string' &&
      Number.isSafeInteger(payload.i) &&
      payload.i! >= 0 &&
      Number.isSafeInteger(payload.p) &&
      payload.p! >= 1;
    if (!valid) throw refuse();
    return { extractor: payload.x!, state: payload.s!, index: payload.i!, page: payload.p! };
  }

  private tag(url: string, body: string): Buffer {
    return createHmac('sha256', this.key).update(CONTEXT).update(url).update('\n').update(body).digest();
  }
}
