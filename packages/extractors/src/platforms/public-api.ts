// What every platform extractor shares: one guarded GET of a JSON API whose error answers are read,
// not thrown (each platform explains its errors in its own body shape), endpoint overrides, the
// readers for untyped JSON (from ../values.ts), status failures and manifest sources.
import { ReelayError } from '@reelay/contracts';
import { Parser } from 'htmlparser2';
import { expandManifest } from '../manifest.js';
import type { ExtractContext, SourceDraft } from '../types.js';
import { str } from '../values.js';

export { arr, frameRate, num, obj, str, type Json } from '../values.js';

export interface ApiAnswer {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  contentType: string;
  /** The parsed body; undefined when it is not JSON (an HTML error page, a proxy's message). */
  json: unknown;
  /** The body as text, for platforms whose answer may be a page rather than JSON. */
  text: string;
}

export interface GetJsonOptions {
  /** The Accept header (default application/json). */
  accept?: string;
  /** The most the answer may hold (default 2 MB). */
  maxBytes?: number;
}

/** The JSON value of a text, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** GETs a JSON API through the egress guard. Error statuses are returned, not thrown. */
export async function getJson(
  ctx: ExtractContext,
  url: string | URL,
  headers: Record<string, string> = {},
  options: GetJsonOptions = {},
): Promise<ApiAnswer> {
  const res = await ctx.egress.fetchText(url, {
    headers: { accept: options.accept ?? 'application/json', ...headers },
    signal: ctx.signal,
    platform: ctx.platform,
    allowErrorStatus: true,
    maxBytes: options.maxBytes ?? 2 * 1024 * 1024,
  });
  const contentType = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  return { url: res.url, status: res.status, contentType, json: parseJson(res.text), text: res.text };
}

/**
 * A platform base URL: `ctx.endpoints[key]` (env PLATFORM_<KEY>, for tests and mirrors) or the
 * default, without a trailing slash.
 */
export function endpoint(ctx: ExtractContext, key: string, fallback: string): string {
  return (ctx.endpoints[key] || fallback).replace(/\/+$/, '');
}

/** The ReelayError for a platform API answer that is an error status and says nothing more useful. */
export function statusFailure(platform: string, status: number, detail?: string): ReelayError {
  const why = detail ? ` (${detail})` : '';
  if (status === 404 || status === 410)
    return new ReelayError(
      'content_not_found',
      `${platform} has no such content: it was deleted, is private or never existed${why}.`,
    );
  if (status === 429) return rateLimited(platform);
  if (status === 401 || status === 403)
    return new ReelayError('upstream_error', `${platform} refused the request (${status})${why}.`);
  return new ReelayError('upstream_error', `${platform} answered with HTTP ${status}${why}.`);
}

export function rateLimited(platform: string): ReelayError {
  return new ReelayError('upstream_rate_limited', `${platform} is rate limiting requests (429); try again later.`);
}

/** A URL as written by an API (absolute, protocol-relative or a path) made absolute, or undefined. */
export function absolute(v: unknown, base: string): string | undefined {
  const raw = str(v)?.trim();
  if (!raw || !URL.canParse(raw, base)) return undefined;
  const url = new URL(raw, base);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}

/** Plain text of an HTML fragment (a post body): tags dropped, entities decoded, spaces collapsed. */
export function htmlText(html: string | undefined): string | undefined {
  if (!html) return undefined;
  let text = '';
  const parser = new Parser(
    {
      ontext: (t) => void (text += t),
      onopentag: (name) => void (name === 'br' || name === 'p' ? (text += ' ') : undefined),
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return text.replace(/\s+/g, ' ').trim() || undefined;
}

/** A title from a post's text: its first line, shortened at a word near 120 characters. */
export function postTitle(text: string | undefined): string | undefined {
  const line = text
    ?.split('\n')
    .map((l) => l.trim())
    .find(Boolean);
  if (!line) return undefined;
  if (line.length <= 120) return line;
  const space = line.lastIndexOf(' ', 120);
  return `${line.slice(0, space > 60 ? space : 120)}…`;
}

/** The extension of a URL's path, lower case ('' when none): the extractors' one definition. */
export { urlExtension as extOf } from '../document.js';

/**
 * The HLS (or DASH) variants of a manifest a platform links to, as sources. `required` says whether
 * the manifest is the only way to the media: when the platform also gave progressive files, a
 * manifest that fails to load (a refused address included) is logged and left out rather than
 * failing the whole extraction, as buildResult drops any refused source; url_blocked comes only when
 * nothing else is left.
 */
export async function manifestSources(
  ctx: ExtractContext,
  url: string,
  required: boolean,
  headers?: Record<string, string>,
): Promise<SourceDraft[]> {
  try {
    const items = await expandManifest(url, ctx, headers);
    return items.flatMap((item) => item.sources);
  } catch (err) {
    if (required || ctx.signal?.aborted) throw err;
    ctx.log?.('manifest left out', { url, error: err instanceof Error ? err.message : String(err) });
    return [];
  }
}
