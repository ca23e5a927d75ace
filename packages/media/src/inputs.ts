// How ffmpeg may open an input: the protocols and demuxers it may use and the request headers it
// sends. This is reelay's network boundary inside ffmpeg, so it is strict and tested argument by argument.

/** A local path, or an `http://` URL that ffmpeg fetches through the worker's egress proxy. */
export interface InputSpec {
  url: string;
  /** Request headers the extract recorded (User-Agent, Referer, Cookie…), sent for every request of this input. */
  headers?: Record<string, string>;
}
export type MediaInput = string | InputSpec;

/** What an input is: it decides which demuxers may open it. */
export type InputKind = 'progressive' | 'hls' | 'dash' | 'subtitles' | 'hls_subtitles' | 'dash_subtitles';

/**
 * `-format_whitelist` per kind (ffmpeg matches any name of a demuxer, so `mov` admits mp4 and m4a and
 * `matroska` admits webm). HLS and DASH segment demuxers inherit the list, hence their segment formats.
 * Without it ffmpeg would pick a demuxer by probing, and a "progressive" URL that serves a playlist,
 * an ffconcat or an IMF file would make ffmpeg open further URLs that nobody checked as manifests.
 */
export const DEMUXERS: Record<InputKind, string> = {
  progressive: 'mov,matroska,mp3,aac,ogg,wav,flac,flv,mpegts,avi,ac3,eac3',
  hls: 'hls,mpegts,mov,aac,mp3,ac3,eac3',
  dash: 'dash,mov,matroska',
  // Subtitle tracks (subtitles.ts): a sidecar file, an HLS playlist of WebVTT segments, DASH text in MP4.
  subtitles: 'webvtt,srt',
  hls_subtitles: 'hls,webvtt',
  dash_subtitles: 'dash,mov',
};

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * The options placed before an input's `-i`; ffmpeg passes the whitelists on to everything the
 * demuxer opens (playlists, segments, keys). A network input may use `http` and `tcp` only (plus
 * `crypto` for AES-128 HLS): ffmpeg sends every http request to the worker's egress proxy
 * (`http_proxy`), which checks each address and does TLS itself. `https`, `tls` and `httpproxy` are
 * left out on purpose: ffmpeg's HLS and DASH demuxers accept any protocol whose name starts with
 * "http", so with `httpproxy` allowed a playlist line `httpproxy://10.0.0.1:80/x.ts` makes ffmpeg
 * dial 10.0.0.1 itself, past the proxy (verified on ffmpeg 5.1). `file`, `concat`, `data` and
 * `subfile` are never allowed for network inputs; a local input gets `file` alone.
 */
export function inputArgs(input: MediaInput, opts: { kind?: InputKind; aes128?: boolean } = {}): string[] {
  const { url, headers } = typeof input === 'string' ? { url: input, headers: undefined } : input;
  const crypto = opts.aes128 ? ['crypto'] : [];
  const formats = ['-format_whitelist', DEMUXERS[opts.kind ?? 'progressive']];
  if (/^http:\/\//i.test(url)) {
    return ['-protocol_whitelist', [...crypto, 'http', 'tcp'].join(','), ...formats, ...headerArgs(headers), '-i', url];
  }
  if (headers && Object.keys(headers).length > 0) throw new TypeError('request headers apply to http inputs only');
  return ['-protocol_whitelist', [...crypto, 'file'].join(','), ...formats, '-i', localPath(url, 'input')];
}

/**
 * A local path with an explicit `file:` protocol, so a name like `a:b.mp4` is never read as a protocol.
 * Anything that looks like a URL is refused: ffmpeg reads the network only through the egress proxy.
 */
export function localPath(path: string, what: 'input' | 'output'): string {
  if (path === '' || SCHEME.test(path)) {
    throw new TypeError(
      `ffmpeg ${what} must be ${what === 'input' ? 'an http:// URL or ' : ''}a file path (prefix a relative name containing ':' with ./): ${path}`,
    );
  }
  return `file:${path}`;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

// Headers that describe the connection or that ffmpeg manages itself; an extract has no business
// setting them, and the proxy would not forward most of them anyway.
const RESERVED = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'range',
  'accept-encoding',
  'icy-metadata',
]);

/** Whether an input may carry this request header (see headerArgs). */
export function isSettableHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return TOKEN.test(name) && !RESERVED.has(lower) && !lower.startsWith('proxy-');
}

/**
 * User-Agent and Referer as ffmpeg's own options, the rest as one `-headers` block. ffmpeg's HLS and
 * DASH demuxers copy all three to every nested request (playlists, segments, keys). A CR or LF in a
 * value would let it smuggle further headers, so it is refused, as are reserved names.
 */
export function headerArgs(headers: Record<string, string> = {}): string[] {
  const args: string[] = [];
  const block: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!isSettableHeader(name))
      throw new TypeError(`request header ${JSON.stringify(name)} cannot be set for an input`);
    if (/[\r\n\0]/.test(value)) throw new TypeError(`request header ${name} has a line break in its value`);
    const lower = name.toLowerCase();
    if (lower === 'user-agent') args.push('-user_agent', value);
    else if (lower === 'referer') args.push('-referer', value);
    else block.push(`${name}: ${value}\r\n`);
  }
  if (block.length > 0) args.push('-headers', block.join(''));
  return args;
}
