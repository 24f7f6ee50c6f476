// Random-access byte sources the GGUF reader parses from. The reader never needs the whole file
// in memory: the header is read in windows and tensor data is read straight into its destination.

export interface ByteSource {
  /** total size in bytes */
  readonly size: number;
  /** a name for error messages (a path, or a label) */
  readonly name: string;
  /** Reads `length` bytes at `offset` into `dest` at `destOffset` (or a new array). Short reads throw. */
  read(offset: number, length: number, dest?: Uint8Array, destOffset?: number): Uint8Array;
  close?(): void;
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
