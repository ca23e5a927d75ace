// The part of yazl (3.x, no bundled types) the collection bundle uses.
declare module 'yazl' {
  import type { Readable } from 'node:stream';
  export interface EntryOptions {
    mtime?: Date;
    compress?: boolean;
    forceZip64Format?: boolean;
    size?: number;
  }
  export class ZipFile {
    outputStream: Readable;
    addReadStreamLazy(
      metadataPath: string,
      options: EntryOptions,
      getReadStream: (cb: (err: Error | null, stream?: Readable) => void) => void,
    ): void;
    end(options?: { forceZip64Format?: boolean }, calculatedTotalSizeCallback?: (size: number) => void): void;
    on(event: 'error', listener: (err: Error) => void): this;
  }
}
