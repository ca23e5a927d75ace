// ffmpeg speaks plain http, and only to the worker's egress proxy (see @reelay/media's inputArgs:
// allowing ffmpeg's own TLS would also allow its `httpproxy` protocol, which a playlist can use to
// dial any address directly). So an https URL reaches ffmpeg under a stand-in http name that the proxy
// turns back into https, and the proxy, through egress, does the TLS and checks the certificate.
// The stand-in keeps the path, so relative playlist references still resolve to the same origin:
//   https://cdn.example.com/a/b.m3u8     ⇄ http://cdn.example.com.443.reelay-https.invalid/a/b.m3u8
//   https://[2001:db8::1]:8443/x         ⇄ http://2001-db8--1.ipv6.8443.reelay-https.invalid/x
// `.invalid` is reserved (RFC 6761), so no real host name can collide with a stand-in.
import { ReelayError } from '@reelay/contracts';
import { absoluteTarget } from '@reelay/egress';
import { rewriteHttpsReferences } from '@reelay/manifests';

export const HTTPS_SUFFIX = '.reelay-https.invalid';

/** The stand-in host for an https authority (`cdn.example.com`, `cdn.example.com:8443`, `[::1]`). */
export function standInHost(hostname: string, port: string): string {
  const host = hostname.startsWith('[') ? `${hostname.slice(1, -1).replaceAll(':', '-')}.ipv6` : hostname;
  return `${host}.${port || '443'}${HTTPS_SUFFIX}`;
}

/**
 * The URL to give ffmpeg for an origin URL: http unchanged, https as its stand-in, without the
 * fragment (ffmpeg never sends it; DASH sources carry `#representation=ID` there).
 * Anything but http(s) is url_blocked, as egress would answer.
 */
export function toProxyUrl(input: string | URL): string {
  const url = new URL(input);
  url.hash = '';
  if (url.protocol === 'http:') return url.href;
  if (url.protocol !== 'https:')
    throw new ReelayError('url_blocked', `Only http and https may be fetched, not ${url.protocol.replace(/:$/, '')}.`);
  return `http://${standInHost(url.hostname, url.port)}${url.pathname}${url.search}`;
}

/**
 * The origin URL a proxy request names (ffmpeg sends `GET http://host:port/path` to a proxy): the
 * shared proxy's parsing (TypeError for a target that is not absolute, url_blocked for a scheme other
 * than http(s)), then the stand-in name mapped back to https.
 */
export function fromProxyUrl(target: string): URL {
  const url = absoluteTarget(target);
  // ffmpeg itself must never speak https (see the top of this file): https travels as a stand-in.
  if (url.protocol !== 'http:')
    throw new ReelayError(
      'url_blocked',
      'ffmpeg may only send plain http to the proxy; https origins travel under stand-in names.',
    );
  if (!url.hostname.endsWith(HTTPS_SUFFIX)) return url;
  const labels = url.hostname.slice(0, -HTTPS_SUFFIX.length).split('.');
  const port = labels.pop() ?? '';
  let host = labels.join('.');
  if (labels.at(-1) === 'ipv6') host = `[${labels.slice(0, -1).join('.').replaceAll('-', ':')}]`;
  if (!/^\d{1,5}$/.test(port) || host === '' || host === '[]')
    throw new TypeError(`not a valid https stand-in name: ${url.hostname}`);
  return new URL(`https://${host}:${port}${url.pathname}${url.search}`);
}

/**
 * A manifest as ffmpeg gets it through the proxy: its https references under their stand-in names,
 * nothing else changed. This is for function, not safety: whatever a manifest says, ffmpeg can only
 * ask the proxy.
 */
export function rewriteManifest(text: string, manifestUrl: URL): string {
  return rewriteHttpsReferences(text, manifestUrl, standInHost);
}
