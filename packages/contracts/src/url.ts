// Validation of user-supplied content URLs, shared by every route that takes one.
import { MAX_URL_LENGTH } from './extract.js';
import { ReelayError } from './errors.js';

/** Parses an absolute http(s) URL or throws invalid_url. WHATWG parsing also normalises hosts. */
export function parseContentUrl(raw: string): URL {
  if (raw.length > MAX_URL_LENGTH) {
    throw new ReelayError('invalid_url', `The URL is longer than ${MAX_URL_LENGTH} characters.`);
  }
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ReelayError('invalid_url', 'The URL is not an absolute http(s) URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ReelayError('invalid_url', 'Only http and https URLs are supported.');
  }
  if (url.username || url.password) {
    throw new ReelayError('invalid_url', 'URLs with credentials are not accepted.');
  }
  if (!url.hostname) {
    throw new ReelayError('invalid_url', 'The URL has no host.');
  }
  // Port 0 names no service; an HTTP client given it connects to the scheme's default port instead.
  if (url.port === '0') {
    throw new ReelayError('invalid_url', 'Port 0 is not a port a URL can name.');
  }
  return url;
}
