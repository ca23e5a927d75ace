// STUB — to be replaced by the HLS extractor.
import type { DocumentExtractor, MediaDraft } from './types.js';

export function looksLikeHls(text: string): boolean {
  return text.trimStart().startsWith('#EXTM3U');
}
export function parseHls(_text: string, _url: URL, _headers?: Record<string, string>): MediaDraft[] {
  throw new Error('not implemented');
}
export const hlsManifest: DocumentExtractor = {
  name: 'hls_manifest',
  detect: () => false,
  extract: async () => {
    throw new Error('not implemented');
  },
};
