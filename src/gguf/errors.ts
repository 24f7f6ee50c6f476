// Typed errors for GGUF parsing. `code` is stable (tests and callers switch on it); the message
// names the file, the byte offset and the field that was wrong.

export type GgufErrorCode =
  | 'NOT_FOUND' // file missing or unreadable
  | 'BAD_MAGIC'
  | 'UNSUPPORTED_VERSION'
  | 'TRUNCATED' // header or tensor data ends before the file does
  | 'COUNT_TOO_LARGE' // a count or length larger than the rest of the file could hold
  | 'INVALID_UTF8'
  | 'UNKNOWN_VALUE_TYPE' // metadata value type id
  | 'UNKNOWN_GGML_TYPE' // tensor type id
  | 'BAD_DIMS' // n_dims out of range, zero or negative dimension, row not a multiple of the block
  | 'DIM_OVERFLOW' // element or byte count overflows
  | 'BAD_ALIGNMENT' // general.alignment not a power of two / wrong type
  | 'MISALIGNED' // a tensor offset not a multiple of the alignment
  | 'DATA_OUT_OF_BOUNDS'
  | 'DATA_OVERLAP'
  | 'DUPLICATE_KEY'
  | 'DUPLICATE_TENSOR'
  | 'NESTING_TOO_DEEP'
  | 'WRONG_TYPE' // a metadata key read with the wrong accessor
  | 'MISSING_KEY'
  | 'MISSING_TENSOR'
  // a loadable model (src/models/validate.ts): metadata and tensors checked against the architecture
  | 'BAD_HPARAM' // a hyperparameter out of range, not an integer, or inconsistent with another
  | 'BAD_TENSOR_SHAPE' // a tensor's shape differs from what the hyperparameters imply
  | 'BAD_TENSOR_TYPE' // a tensor's element type cannot be used where the architecture uses it
  | 'UNEXPECTED_TENSOR' // a tensor the architecture does not use (llama.cpp refuses these too)
  | 'UNSUPPORTED_ARCH'
  // split models (src/gguf/split.ts, llama.cpp's gguf-split)
  | 'SPLIT_NOT_FIRST' // the file named is not the first shard
  | 'SPLIT_MISSING_SHARD' // a shard file the first one implies is absent
  | 'SPLIT_MISMATCH' // a shard's split.no / split.count / split.tensors.count disagrees
  | 'SPLIT_BAD_NAME'; // a split model whose file name is not PREFIX-00001-of-0000N.gguf

/** What was wrong, for callers that report it structurally (the key or tensor, expected vs found). */
export interface GgufErrorDetail {
  key?: string;
  tensor?: string;
  expected?: string;
  found?: string;
}

export class GgufError extends Error {
  readonly code: GgufErrorCode;
  readonly offset: number | undefined;
  readonly file: string | undefined;
  readonly detail: GgufErrorDetail | undefined;
  constructor(code: GgufErrorCode, message: string, file?: string, offset?: number, detail?: GgufErrorDetail) {
    const where = [file, offset !== undefined ? `offset ${offset}` : undefined].filter(Boolean).join(' at ');
    super(where ? `${where}: ${message}` : message);
    this.name = 'GgufError';
    this.code = code;
    this.offset = offset;
    this.file = file;
    this.detail = detail;
  }
}
