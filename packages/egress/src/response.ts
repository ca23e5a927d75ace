// What egress answers: the response shapes its callers read. A leaf module, so that the parts egress
// itself uses (decode.ts) and the proxy's parts can name them without importing egress.ts.
import type { Readable } from 'node:stream';

export interface EgressResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body; the caller must consume or destroy it. */
  body: Readable;
}

export interface TextResponse {
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}
