// Safe download file names: a sanitised name from a title or the client, and the Content-Disposition
// header built by the `content-disposition` package (RFC 6266 / RFC 8187) with an ASCII fallback.
import { create as createDisposition } from 'content-disposition';

const MAX_NAME = 150;

// Bidi embeddings, overrides, isolates and marks: U+202E turns "clip\u202Egpj.exe" into what reads as
// "clipexe.jpg", so a name could lie about its extension.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// A lone UTF-16 surrogate cannot be encoded as UTF-8: encodeURIComponent throws on it.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Replaces unpaired surrogates with U+FFFD, so the string has a UTF-8 form. */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}

/** Removes path parts, control, bidi and reserved characters, and leading or trailing dots. */
function cleanName(raw: string | undefined): string {
  return wellFormed(raw ?? '')
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .replace(BIDI_CONTROLS, '')
    .replace(/[/\\:*?"<>|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[.\s]+|[.\s]+$/g, '');
}

/** A clean name cut to MAX_NAME characters; never an empty or dot name. */
export function sanitizeBasename(raw: string | undefined, fallback = 'download'): string {
  const cut = [...cleanName(raw)].slice(0, MAX_NAME).join('').trim();
  return cut || fallback;
}

/**
 * `attachment` with the name: a plain-ASCII `filename` for old clients and, when the name is not
 * plain ASCII, `filename*` with its UTF-8 form. The name is cleaned again here because stored job
 * metadata may predate the current rules, but not cut again: it already carries its extension.
 */
export function contentDisposition(filename: string): string {
  const name = cleanName(filename) || 'download';
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  return createDisposition(name, { fallback: ascii });
}
