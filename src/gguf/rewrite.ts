// Turns a parsed file back into writer input, so a GGUF can be copied, edited (metadata, tensor
// order, alignment, version) and written again.
import { GgufValueType, readTensorData, type GgufFile, type GgufMetaEntry } from './reader.js';
import type { GgufWriteInput, GgufWriteItemType, GgufWriteValue } from './writer.js';

const ITEM: Record<number, GgufWriteItemType> = {
  [GgufValueType.UINT8]: 'u8', [GgufValueType.INT8]: 'i8', [GgufValueType.UINT16]: 'u16', [GgufValueType.INT16]: 'i16',
  [GgufValueType.UINT32]: 'u32', [GgufValueType.INT32]: 'i32', [GgufValueType.FLOAT32]: 'f32', [GgufValueType.BOOL]: 'bool',
  [GgufValueType.STRING]: 'string', [GgufValueType.ARRAY]: 'array', [GgufValueType.UINT64]: 'u64', [GgufValueType.INT64]: 'i64',
  [GgufValueType.FLOAT64]: 'f64',
};

/** Nested arrays lose their element types in the plain-JS view; infer them back from the values. */
function nestedItem(v: unknown): { itemType: GgufWriteItemType; value: ArrayLike<unknown> } {
  if (v instanceof Float32Array) return { itemType: 'f32', value: v };
  if (v instanceof Float64Array) return { itemType: 'f64', value: v };
  if (v instanceof Int32Array) return { itemType: 'i32', value: v };
  if (v instanceof Uint32Array) return { itemType: 'u32', value: v };
  if (v instanceof Int16Array) return { itemType: 'i16', value: v };
  if (v instanceof Uint16Array) return { itemType: 'u16', value: v };
  if (v instanceof Int8Array) return { itemType: 'i8', value: v };
  if (v instanceof Uint8Array) return { itemType: 'u8', value: v };
  if (v instanceof BigInt64Array) return { itemType: 'i64', value: v };
  if (v instanceof BigUint64Array) return { itemType: 'u64', value: v };
  const a = v as unknown[];
  if (a.length > 0 && typeof a[0] === 'string') return { itemType: 'string', value: a };
  if (a.length > 0 && typeof a[0] === 'boolean') return { itemType: 'bool', value: a };
  return { itemType: 'array', value: a.map(nestedItem) };
}

export function metaEntryToWrite(e: GgufMetaEntry): GgufWriteValue {
  const type = ITEM[e.type]!;
  if (type === 'array') {
    const item = ITEM[e.arrayType!]!;
    return { type: 'array', itemType: item, value: item === 'array' ? (e.value as unknown[]).map(nestedItem) : (e.value as ArrayLike<unknown>) };
  }
  return { type, value: e.value } as GgufWriteValue;
}

/** Everything in `file` (metadata in file order, tensors with their bytes) as writer input. */
export function toWriteInput(file: GgufFile): GgufWriteInput {
  return {
    version: file.version as 1 | 2 | 3,
    metadata: [...file.metaEntries].map(([k, e]) => [k, metaEntryToWrite(e)]),
    tensors: file.tensors.map((t) => ({ name: t.name, dims: t.dims, type: t.type, data: readTensorData(file, t) })),
  };
}
