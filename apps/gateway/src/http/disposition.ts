// Safe download file names: a sanitised name from a title or the client, an ASCII `filename` for
// old clients and an RFC 6266 / RFC 5987 `filename*` with the full UTF-8 name.

const MAX_NAME = 150;

/** Removes path parts, control and reserved characters; never returns an empty or dot name. */
export function sanitizeBasename(raw: string | undefined, fallback = 'download'): string {
  const cleaned = (raw ?? '')
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .replace(/[/\\:*?"<>|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[.\s]+|[.\s]+$/g, '');
  const cut = [...cleaned].slice(0, MAX_NAME).join('').trim();
  return cut || fallback;
}

/** `name.ext`, with the extension only when it is a plain token. */
export function withExtension(basename: string, ext: string | undefined): string {
  return ext && /^[a-z0-9]{1,5}$/i.test(ext) ? `${basename}.${ext.toLowerCase()}` : basename;
}

export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
