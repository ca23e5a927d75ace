// STUB — to be replaced by the HTML page extractor.
import type { DocumentExtractor } from './types.js';

export const htmlPage: DocumentExtractor = {
  name: 'html_page',
  detect: () => false,
  extract: async () => {
    throw new Error('not implemented');
  },
};
