// STUB — to be replaced by the DASH extractor.
import type { DocumentExtractor, MediaDraft } from './types.js';

export function looksLikeMpd(text: string): boolean {
  return /<MPD[\s>]/.test(text.slice(0, 2048));
}
export function parseMpd(_text: string, _url: URL, _headers?: Record<string, string>): MediaDraft[] {
  throw new Error('not implemented');
}
export const dashManifest: DocumentExtractor = {
  name: 'dash_manifest',
  detect: () => false,
  extract: async () => {
    throw new Error('not implemented');
  },
};
