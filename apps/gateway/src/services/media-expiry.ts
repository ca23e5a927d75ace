// When the media URLs of an extract stop working. Several platforms sign their media URLs with an
// expiry (YouTube, Streamable, Vimeo, Loom and other CloudFront or S3 hosts, Twitch clips, TikTok,
// Instagram and Facebook): a cached extract must not outlive its URLs, so the extract cache reads
// the earliest expiry it can find here. Pure: no clock, no I/O.

/** A plausible expiry in Unix seconds: 2001..2286, 10 digits. Anything else is not read as one. */
const UNIX_SECONDS = /^\d{10}$/;

/**
 * Query parameters holding an expiry in Unix seconds: googlevideo's `expire`, CloudFront's
 * `Expires`, TikTok's `x-expires`, and the generic `exp`/`expires`/`expiry`. Compared lowercased.
 */
const SECONDS_PARAMS = new Set(['expire', 'expires', 'x-expires', 'exp', 'expiry']);

/** Akamai-style tokens put `exp=SECONDS` inside a parameter or a path segment (`exp=…~acl=…~hmac=…`, Vimeo's CDN). */
const TOKEN_EXP = /(?:^|[~/?&!,;])exp=(\d{10})(?=$|[~/&!,;])/g;

/** Twitch's clip `token` is JSON with `"expires":SECONDS`. */
const JSON_EXPIRES = /"expires"\s*:\s*(\d{10})\b/g;

/** The earliest expiry (Unix seconds) written into one URL, or undefined when it carries none. */
export function urlExpiry(raw: string): number | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const found: number[] = [];
  const params = url.searchParams;
  for (const [name, value] of params) {
    const key = name.toLowerCase();
    if (SECONDS_PARAMS.has(key) && UNIX_SECONDS.test(value)) found.push(Number(value));
    // Facebook's and Instagram's CDNs: `oe` is the expiry in hexadecimal Unix seconds.
    else if (key === 'oe' && /^[0-9a-f]{8}$/i.test(value)) found.push(parseInt(value, 16));
    for (const m of value.matchAll(TOKEN_EXP)) found.push(Number(m[1]));
    for (const m of value.matchAll(JSON_EXPIRES)) found.push(Number(m[1]));
  }
  // S3 SigV4 presigned URLs: signed at X-Amz-Date (YYYYMMDDTHHMMSSZ) for X-Amz-Expires seconds.
  const amzDate = params.get('X-Amz-Date')?.match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/);
  const amzExpires = params.get('X-Amz-Expires');
  if (amzDate && amzExpires && /^\d{1,7}$/.test(amzExpires)) {
    const [, y, mo, d, h, mi, s] = amzDate.map(Number);
    found.push(Date.UTC(y!, mo! - 1, d, h, mi, s) / 1000 + Number(amzExpires));
  }
  for (const m of decodeURIComponentSafe(url.pathname).matchAll(TOKEN_EXP)) found.push(Number(m[1]));
  return found.length > 0 ? Math.min(...found) : undefined;
}

/** The earliest expiry among every http(s) URL found anywhere in a value (an extract result). */
export function earliestExpiry(value: unknown): number | undefined {
  let earliest: number | undefined;
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      if (!/^https?:/i.test(v)) return;
      const e = urlExpiry(v);
      if (e !== undefined && (earliest === undefined || e < earliest)) earliest = e;
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') Object.values(v).forEach(visit);
  };
  visit(value);
  return earliest;
}

/**
 * How long (ms) an extract may be cached: EXTRACT_CACHE_SECONDS, cut so the entry ends `marginMs`
 * before its earliest media URL expires (a client answered from the cache still has that long to
 * start its download). 0 means do not cache.
 */
export function cacheTtlMs(maxSeconds: number, expiry: number | undefined, nowMs: number, marginMs: number): number {
  const max = maxSeconds * 1000;
  if (expiry === undefined) return max;
  return Math.max(0, Math.min(max, Math.floor(expiry * 1000 - nowMs - marginMs)));
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
