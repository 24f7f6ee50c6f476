// The ggml tensor type table: ids as stored in GGUF files, and each type's block geometry.
// A row of `blockSize` values is stored in `typeSize` bytes; a tensor row (ne0 values) must
// hold a whole number of blocks.

export const GgmlType = {
  F32: 0, F16: 1, Q4_0: 2, Q4_1: 3, Q5_0: 6, Q5_1: 7, Q8_0: 8, Q8_1: 9,
  Q2_K: 10, Q3_K: 11, Q4_K: 12, Q5_K: 13, Q6_K: 14, Q8_K: 15,
  IQ2_XXS: 16, IQ2_XS: 17, IQ3_XXS: 18, IQ1_S: 19, IQ4_NL: 20, IQ3_S: 21, IQ2_S: 22, IQ4_XS: 23,
  I8: 24, I16: 25, I32: 26, I64: 27, F64: 28, IQ1_M: 29, BF16: 30, TQ1_0: 34, TQ2_0: 35, MXFP4: 39,
} as const;
export type GgmlTypeId = (typeof GgmlType)[keyof typeof GgmlType];

export interface GgmlTypeInfo {
  readonly id: number;
  readonly name: string;
  /** values per block */
  readonly blockSize: number;
  /** bytes per block */
  readonly typeSize: number;
}

const table: GgmlTypeInfo[] = [
  { id: 0, name: 'F32', blockSize: 1, typeSize: 4 },
  { id: 1, name: 'F16', blockSize: 1, typeSize: 2 },
  { id: 2, name: 'Q4_0', blockSize: 32, typeSize: 18 },
  { id: 3, name: 'Q4_1', blockSize: 32, typeSize: 20 },
  { id: 6, name: 'Q5_0', blockSize: 32, typeSize: 22 },
  { id: 7, name: 'Q5_1', blockSize: 32, typeSize: 24 },
  { id: 8, name: 'Q8_0', blockSize: 32, typeSize: 34 },
  { id: 9, name: 'Q8_1', blockSize: 32, typeSize: 36 },
  { id: 10, name: 'Q2_K', blockSize: 256, typeSize: 84 },
  { id: 11, name: 'Q3_K', blockSize: 256, typeSize: 110 },
  { id: 12, name: 'Q4_K', blockSize: 256, typeSize: 144 },
  { id: 13, name: 'Q5_K', blockSize: 256, typeSize: 176 },
  { id: 14, name: 'Q6_K', blockSize: 256, typeSize: 210 },
  { id: 15, name: 'Q8_K', blockSize: 256, typeSize: 292 },
  { id: 16, name: 'IQ2_XXS', blockSize: 256, typeSize: 66 },
  { id: 17, name: 'IQ2_XS', blockSize: 256, typeSize: 74 },
  { id: 18, name: 'IQ3_XXS', blockSize: 256, typeSize: 98 },
  { id: 19, name: 'IQ1_S', blockSize: 256, typeSize: 50 },
  { id: 20, name: 'IQ4_NL', blockSize: 32, typeSize: 18 },
  { id: 21, name: 'IQ3_S', blockSize: 256, typeSize: 110 },
  { id: 22, name: 'IQ2_S', blockSize: 256, typeSize: 82 },
  { id: 23, name: 'IQ4_XS', blockSize: 256, typeSize: 136 },
  { id: 24, name: 'I8', blockSize: 1, typeSize: 1 },
  { id: 25, name: 'I16', blockSize: 1, typeSize: 2 },
  { id: 26, name: 'I32', blockSize: 1, typeSize: 4 },
  { id: 27, name: 'I64', blockSize: 1, typeSize: 8 },
  { id: 28, name: 'F64', blockSize: 1, typeSize: 8 },
  { id: 29, name: 'IQ1_M', blockSize: 256, typeSize: 56 },
  { id: 30, name: 'BF16', blockSize: 1, typeSize: 2 },
  { id: 34, name: 'TQ1_0', blockSize: 256, typeSize: 54 },
  { id: 35, name: 'TQ2_0', blockSize: 256, typeSize: 66 },
  { id: 39, name: 'MXFP4', blockSize: 32, typeSize: 17 },
];

const byId = new Map<number, GgmlTypeInfo>(table.map((t) => [t.id, t]));
const byName = new Map<string, GgmlTypeInfo>(table.map((t) => [t.name.toLowerCase(), t]));

export function ggmlTypeInfo(id: number): GgmlTypeInfo | undefined {
  return byId.get(id);
}
export function ggmlTypeByName(name: string): GgmlTypeInfo | undefined {
  return byName.get(name.toLowerCase());
}
export function ggmlTypeName(id: number): string {
  return byId.get(id)?.name ?? `type#${id}`;
}
/** Bytes of one row of `ne0` values; throws if ne0 is not a multiple of the block size. */
export function rowBytes(type: number, ne0: number): number {
  const t = byId.get(type);
  if (!t) throw new Error(`unknown ggml type ${type}`);
  if (ne0 % t.blockSize !== 0) throw new Error(`row of ${ne0} values is not a multiple of ${t.name}'s block of ${t.blockSize}`);
  return (ne0 / t.blockSize) * t.typeSize;
}
