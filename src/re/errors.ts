// Typed errors for the reverse-engineering toolkit. The `code` is stable (scripts match on it);
// the message names the file, offset or field so one line on stderr is enough to act on.

export type ReErrorCode =
  | 'BAD_ARGS'
  | 'IO'
  | 'OUT_OF_RANGE'
  | 'PB_MALFORMED'
  | 'FB_MALFORMED'
  | 'PROBE_MANIFEST'
  | 'PROBE_MISMATCH'
  | 'COMPILED_MISSING'
  | 'LAYOUT_INCONSISTENT'
  | 'LAYOUT_INVALID'
  | 'SIZE_MISMATCH'
  | 'GGUF';

export class ReError extends Error {
  readonly code: ReErrorCode;
  constructor(code: ReErrorCode, message: string) {
    // One line on stderr: wrapped messages (node's parseArgs writes several lines) are joined.
    super(message.replace(/\s*\n\s*/g, ' '));
    this.name = 'ReError';
    this.code = code;
  }
}

export function reError(code: ReErrorCode, message: string): ReError {
  return new ReError(code, message);
}
