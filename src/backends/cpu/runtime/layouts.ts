// Weight layouts: which kernel computes a weight type (and on which activation type), the row geometry
// (from ggml's block table, src/gguf/ggml-types.ts; CPU-only layouts keep their base type's blocks), the
// 4-row interleaved layouts and getting rows back out of them.
import { GgmlType, ggmlTypeInfo, ggmlTypeName } from '../../../gguf/ggml-types.js';
import { dequantizer } from '../../../quant/dequantize.js';
import { CpuRuntimeError } from './errors.js';
import type { WasmHeap } from './memory.js';
import { KERNEL_INDEX, type KernelName } from './protocol.js';
import type { ThreadPool } from './pool.js';

/**
 * CPU-only weight layouts produced by `repackRows4` (ids outside ggml's range). Pass the returned id as
 * the weight type to matmul.
 */
export const CpuLayout = {
  /** Q4_0 with 4 rows interleaved per block: [4 x f16 d][4 x 16 B quants]; rows % 4 == 0; same size as Q4_0 */
  Q4_0r4: 0x1003,
  /** Q8_0 with 4 rows interleaved per block: [4 x f16 d][4 x 32 B quants]; rows % 4 == 0; same size as Q8_0 (fast numerics) */
  Q8_0r4: 0x1004,
} as const;

/** the ggml type a CPU layout rearranges (the type itself for a ggml type) */
export function baseType(wtype: number): number {
  return wtype === CpuLayout.Q4_0r4 ? GgmlType.Q4_0 : wtype === CpuLayout.Q8_0r4 ? GgmlType.Q8_0 : wtype;
}

/** Activation type the kernels take for a weight type (as ggml's vec_dot_type; F16 -> f32 rounded through f16). */
export function activationTypeFor(wtype: number): number {
  switch (baseType(wtype)) {
    case GgmlType.Q4_0: case GgmlType.Q5_0: case GgmlType.Q8_0: case GgmlType.IQ4_NL: return GgmlType.Q8_0;
    case GgmlType.Q4_1: case GgmlType.Q5_1: return GgmlType.Q8_1;
    case GgmlType.Q2_K: case GgmlType.Q3_K: case GgmlType.Q4_K: case GgmlType.Q5_K: case GgmlType.Q6_K: case GgmlType.IQ4_XS: return GgmlType.Q8_K;
    case GgmlType.F16: return GgmlType.F16;
    case GgmlType.BF16: return GgmlType.BF16;
    case GgmlType.F32: return GgmlType.F32;
    default: throw new CpuRuntimeError('UNSUPPORTED_TYPE', `cpu matmul does not support weight type ${ggmlTypeName(wtype)}`);
  }
}

/** Bytes of one row of `cols` activations in activation type `vtype` (F16 means f32 rounded through f16). */
export function activationRowBytes(vtype: number, cols: number): number {
  switch (vtype) {
    case GgmlType.Q8_0: case GgmlType.Q8_1: case GgmlType.Q8_K: return rowBytesOf(vtype, cols);
    case GgmlType.F16: case GgmlType.BF16: case GgmlType.F32: return cols * 4;
    default: throw new CpuRuntimeError('UNSUPPORTED_TYPE', `no activation layout for ${ggmlTypeName(vtype)}`);
  }
}

/**
 * The kernel of a weight type. aux: the kernel takes an activation side table (Q8_0/Q8_1: f32 d and sums per
 * block; Q8_K: widened quants); rowAlign: rows per work item; fast: its free-order kernel (fast numerics).
 */
export interface WeightKernel { name: KernelName; block: number; bytes: number; aux: boolean; rowAlign: number; fast: KernelName | null }
function kernel(wtype: number, name: KernelName, opts: { aux?: boolean; rowAlign?: number; fast?: KernelName } = {}): [number, WeightKernel] {
  const info = ggmlTypeInfo(baseType(wtype))!;
  return [wtype, { name, block: info.blockSize, bytes: info.typeSize, aux: opts.aux ?? false, rowAlign: opts.rowAlign ?? 1, fast: opts.fast ?? null }];
}
const WEIGHT_KERNELS = new Map<number, WeightKernel>([
  kernel(GgmlType.Q4_0, 'mm_q4_0', { aux: true }),
  kernel(CpuLayout.Q4_0r4, 'mm_q4_0r4', { aux: true, rowAlign: 4, fast: 'mmf_q4_0r4' }),
  kernel(GgmlType.Q4_1, 'mm_q4_1', { aux: true }),
  kernel(GgmlType.Q5_0, 'mm_q5_0', { aux: true }),
  kernel(GgmlType.Q5_1, 'mm_q5_1', { aux: true }),
  kernel(GgmlType.Q8_0, 'mm_q8_0', { aux: true, fast: 'mmf_q8_0' }),
  // a fast-numerics layout: its one kernel is free-order
  kernel(CpuLayout.Q8_0r4, 'mmf_q8_0r4', { aux: true, rowAlign: 4 }),
  kernel(GgmlType.Q2_K, 'mm_q2_K'),
  kernel(GgmlType.Q3_K, 'mm_q3_K', { aux: true }),
  kernel(GgmlType.Q4_K, 'mm_q4_K', { aux: true, fast: 'mmf_q4_K' }),
  kernel(GgmlType.Q5_K, 'mm_q5_K', { aux: true }),
  kernel(GgmlType.Q6_K, 'mm_q6_K', { aux: true }),
  kernel(GgmlType.F16, 'mm_f16'),
  kernel(GgmlType.BF16, 'mm_bf16'),
  kernel(GgmlType.IQ4_NL, 'mm_iq4_nl', { aux: true }),
  kernel(GgmlType.IQ4_XS, 'mm_iq4_xs'),
  kernel(GgmlType.F32, 'mm_f32'),
]);
export const MATMUL_TYPES: readonly number[] = [...WEIGHT_KERNELS.keys()];

export function weightKernel(wtype: number): WeightKernel {
  const k = WEIGHT_KERNELS.get(wtype);
  if (!k) throw new CpuRuntimeError('UNSUPPORTED_TYPE', `cpu matmul does not support weight type ${ggmlTypeName(wtype)}`);
  return k;
}

/** Bytes of one weight row of `cols` values. */
export function weightRowBytes(wtype: number, cols: number): number {
  const k = weightKernel(wtype);
  if (cols % k.block !== 0) throw new CpuRuntimeError('BAD_SHAPE', `row of ${cols} values is not a multiple of ${ggmlTypeName(wtype)}'s block of ${k.block}`);
  return (cols / k.block) * k.bytes;
}

/** Bytes of one row of any ggml type (or CPU layout). */
export function rowBytesOf(type: number, cols: number): number {
  const t = ggmlTypeInfo(baseType(type));
  if (!t) throw new CpuRuntimeError('UNSUPPORTED_TYPE', `unknown ggml type ${type}`);
  if (cols % t.blockSize) throw new CpuRuntimeError('BAD_SHAPE', `row of ${cols} values is not a multiple of ${t.name}'s block of ${t.blockSize}`);
  return (cols / t.blockSize) * t.typeSize;
}

/** Weight layouts: the 4-row interleave and reading rows (any layout) back as f32. */
export class Layouts {
  private rowTmp: Uint8Array | null = null;
  constructor(private readonly heap: WasmHeap, private readonly pool: ThreadPool) {}

  repackRows4(w: number, rows: number, cols: number, wtype: number = GgmlType.Q4_0): number {
    if (wtype !== GgmlType.Q4_0 && wtype !== GgmlType.Q8_0) throw new CpuRuntimeError('UNSUPPORTED_TYPE', `no 4-row layout for ${ggmlTypeName(wtype)}`);
    const ws = weightRowBytes(wtype, cols);
    const layout = wtype === GgmlType.Q4_0 ? CpuLayout.Q4_0r4 : CpuLayout.Q8_0r4;
    if (rows % 4) throw new CpuRuntimeError('BAD_SHAPE', `${layout === CpuLayout.Q4_0r4 ? 'Q4_0r4' : 'Q8_0r4'} needs a multiple of 4 rows, got ${rows}`);
    const tmp = this.heap.alloc(4 * ws, 16);
    try {
      // one thread: the kernel copies each group through tmp
      this.pool.runHere(KERNEL_INDEX.repack_r4, 0, rows / 4, w, ws, cols / 32, tmp, wtype === GgmlType.Q4_0 ? 18 : 34);
    } finally {
      this.heap.free(tmp);
    }
    return layout;
  }

  /** out[i] = row ids[i] of a table of type wtype (any ggml type src/quant dequantizes, or a CpuLayout), as f32 */
  getRows(wtype: number, table: number, cols: number, ids: ArrayLike<number>, out: number): void {
    const repacked = wtype === CpuLayout.Q4_0r4 || wtype === CpuLayout.Q8_0r4;
    const rb = rowBytesOf(wtype, cols);
    const deq = dequantizer(baseType(wtype));
    const u8 = this.heap.u8All();
    const f32 = this.heap.f32All();
    if (out % 4) throw new CpuRuntimeError('BAD_SHAPE', `getRows output ${out} is not 4-byte aligned`);
    // Q6_K and the 4-row layouts in WASM (kernels/mm/rows.ts, the same bits): the TS decoders ran cold (a decode
    // step reads one row: interpreted code for the first hundreds of calls, ~0.3 ms a row)
    if (wtype === GgmlType.Q6_K) {
      for (let i = 0; i < ids.length; i++) this.pool.runHere8(KERNEL_INDEX.get_rows_q6_K, 0, cols / 256, table + ids[i]! * rb, out + i * cols * 4);
      return;
    }
    if (repacked) {
      const k = wtype === CpuLayout.Q4_0r4 ? KERNEL_INDEX.get_rows_q4_0r4 : KERNEL_INDEX.get_rows_q8_0r4;
      for (let i = 0; i < ids.length; i++) {
        const r = ids[i]!;
        this.pool.runHere8(k, 0, cols / 32, table + (r - (r & 3)) * rb, r & 3, out + i * cols * 4);
      }
      return;
    }
    for (let i = 0; i < ids.length; i++) {
      let src = u8, so = table + ids[i]! * rb;
      if (repacked) {
        // gather this row's blocks out of its 4-row group
        if (!this.rowTmp || this.rowTmp.length < rb) this.rowTmp = new Uint8Array(rb);
        const bs = wtype === CpuLayout.Q4_0r4 ? 18 : 34, qb = bs - 2;
        const t = this.rowTmp, r = ids[i]!, g = table + (r - (r & 3)) * rb, j = r & 3;
        for (let b = 0; b < rb / bs; b++) {
          const o = g + b * 4 * bs;
          t[b * bs] = u8[o + 2 * j]!;
          t[b * bs + 1] = u8[o + 2 * j + 1]!;
          const from = o + 8 + qb * j;
          for (let q = 0; q < qb; q++) t[b * bs + 2 + q] = u8[from + q]!;
        }
        src = t; so = 0;
      }
      deq(src, so, f32, out / 4 + i * cols, cols);
    }
  }
}
