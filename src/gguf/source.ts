// Random-access byte sources the GGUF reader parses from. The reader never needs the whole file
// in memory: the header is read in windows and tensor data is read straight into its destination.

export interface ByteSource {
  /** total size in bytes */
  readonly size: number;
  /** a name for error messages (a path, or a label) */
  readonly name: string;
  /** Reads `length` bytes at `offset` into `dest` at `destOffset` (or a new array). Short reads throw. */
  read(offset: number, length: number, dest?: Uint8Array, destOffset?: number): Uint8Array;
  /**
   * Streaming sources (a URL, a Blob) hold only the header in memory: `read` serves that part and tensor
   * data comes through `readAsync`, fastest when called in increasing offset order (one response streams
   * through; a step back starts a new range request).
   */
  readAsync?(offset: number, length: number, dest: Uint8Array, destOffset?: number): Promise<void>;
  /** streaming sources: bytes from 0 that `read` serves now (the header parser keeps its windows within them) */
  readonly prefixBytes?: number;
  close?(): void;
}

/**
 * Thrown by a streaming source's `read` for bytes past the part it holds: the header parser is synchronous,
 * so the caller fetches up to `end` and parses again (src/api/stream-source.ts).
 */
export class NeedMoreBytes extends Error {
  constructor(readonly end: number) {
    super(`the header reads past the ${end} bytes fetched so far`);
    this.name = 'NeedMoreBytes';
  }
}

/** A source over bytes already in memory (browser File/ArrayBuffer, tests, fetched buffers). */
export function memorySource(bytes: Uint8Array, name = '<memory>'): ByteSource {
  return {
    size: bytes.length,
    name,
    read(offset, length, dest, destOffset = 0) {
      if (offset < 0 || offset + length > bytes.length) throw new RangeError(`read of ${length} bytes at ${offset} past end ${bytes.length}`);
      const view = bytes.subarray(offset, offset + length);
      if (!dest) return view;
      dest.set(view, destOffset);
      return dest;
    },
  };
}
