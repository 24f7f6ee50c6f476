// Node entry point: open a GGUF file from a path.
import { fileSource } from './file-source.js';
import { parseGgufSource, type GgufFile } from './reader.js';

export function openGguf(path: string): GgufFile {
  const src = fileSource(path);
  try {
    return parseGgufSource(src);
  } catch (e) {
    src.close?.();
    throw e;
  }
}
