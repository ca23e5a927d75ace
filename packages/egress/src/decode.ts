// Decoding bodies by their Content-Encoding, for egress's readers and for the proxies.
// The proxy never passes on a compressed body. Its clients ask for identity, yet an origin may send
// gzip anyway, and ffmpeg and yt-dlp would inflate it themselves, where no byte limit sees it: a 1 MB
// gzip of 1 GiB grew yt-dlp to 2 GB. So the proxy decodes what it can read (gzip, deflate, br) and
// counts the decoded bytes against its limits; a body in another encoding is refused.
import { pipeline } from 'node:stream';
import type { Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { EgressResponse } from './response.js';
import { firstHeader } from './transport.js';

/** A decoder for the encodings reelay reads (gzip, deflate, br); undefined for any other. */
function decoderFor(encoding: string): Transform | undefined {
  if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.createGunzip();
  if (encoding === 'deflate') return zlib.createInflate();
  if (encoding === 'br') return zlib.createBrotliDecompress();
  return undefined;
}

/**
 * A body decoded by its Content-Encoding (gzip, deflate, br; anything else as it came). The
 * decoder honours backpressure, so a reader that stops at its byte limit stops the inflation too:
 * a 1 MB gzip of 1 GiB costs what the reader keeps, never the gigabyte.
 */
export function decodeBody(body: Readable, headers: EgressResponse['headers']): Readable {
  const encoding = firstHeader(headers['content-encoding'])?.trim().toLowerCase();
  const decoder = encoding ? decoderFor(encoding) : undefined;
  if (!decoder) return body;
  // pipeline destroys each side when the other fails or is destroyed, so a reader that gives up
  // still releases the connection.
  pipeline(body, decoder, () => {});
  decoder.on('error', () => {});
  return decoder;
}

// Headers that describe the encoded body, not the one the client gets.
const ENCODED_ONLY = [
  'content-encoding',
  'content-length',
  'content-range',
  'accept-ranges',
  'etag',
  'content-md5',
  'digest',
];

/** The response with an identity body; a string (the encoding) when it is one the proxy cannot read. */
export function decodeResponse(upstream: EgressResponse, method: string | undefined): EgressResponse | string {
  const raw = upstream.headers['content-encoding'];
  const encoding = (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return upstream;
  const headers = { ...upstream.headers };
  for (const name of ENCODED_ONLY) delete headers[name];
  if (method === 'HEAD' || upstream.status === 204 || upstream.status === 304) return { ...upstream, headers };
  const decoder = decoderFor(encoding);
  if (!decoder) return encoding;
  // Either side failing or being destroyed ends the other, so the upstream connection is released.
  const body: Readable = pipeline(upstream.body, decoder, () => {});
  return { ...upstream, headers, body };
}
