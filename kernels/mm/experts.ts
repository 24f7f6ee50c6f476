// mul_mat_id's one-token experts in one dispatch: [r0, r1) indexes the rows of every selected expert one after
// the other (slot s owns rows [s * rows, (s + 1) * rows)); each slot's range runs the weight type's own
// matmul kernel over that expert's matrix with one activation row, so every output is that kernel's
// result for its rows (same bits as one call per expert) and its touch-ahead stays inside the expert's rows.
// The slot table (abi.ts MMX_SLOT_BYTES per slot): the expert's weight matrix, its first activation row, that
// row's side table (kernels taking one), its first output row and its rows (tokens): a slot of several rows runs
// the kernel's several-token path, as one matmul call of those rows would.
import { MMX_IQ4_NL, MMX_IQ4_XS, MMX_Q2_K, MMX_Q3_K, MMX_Q4_0, MMX_Q4_0R4, MMX_Q4_0R4_FAST, MMX_Q4_1, MMX_Q4_K, MMX_Q4_K_FAST, MMX_Q5_0, MMX_Q5_1, MMX_Q5_K, MMX_Q6_K, MMX_Q8_0, MMX_Q8_0_FAST, MMX_Q8_0R4_FAST, MMX_SLOT_BYTES } from '../abi';
import { mm_q4_0, mm_q4_0r4, mmf_q4_0r4 } from './q4_0';
import { mm_q4_1, mm_q5_0, mm_q5_1, mm_iq4_nl } from './legacy';
import { mm_q8_0, mmf_q8_0, mmf_q8_0r4 } from './q8_0';
import { mm_q2_K, mm_iq4_xs } from './kquant-misc';
import { mm_q3_K } from './q3_k';
import { mm_q4_K, mmf_q4_K } from './q4_k';
import { mm_q5_K } from './q5_k';
import { mm_q6_K } from './q6_k';

@inline function one(kind: i32, r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  switch (kind) {
    case MMX_Q4_0: mm_q4_0(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q4_0R4: mm_q4_0r4(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q4_0R4_FAST: mmf_q4_0r4(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q4_1: mm_q4_1(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q5_0: mm_q5_0(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q5_1: mm_q5_1(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q8_0: mm_q8_0(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q8_0_FAST: mmf_q8_0(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q8_0R4_FAST: mmf_q8_0r4(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q2_K: mm_q2_K(r0, r1, w, ws, a, as, nTok, y, ys, nb); break;
    case MMX_Q3_K: mm_q3_K(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q4_K: mm_q4_K(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, 0); break;
    case MMX_Q4_K_FAST: mmf_q4_K(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, 0); break;
    case MMX_Q5_K: mm_q5_K(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_Q6_K: mm_q6_K(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_IQ4_NL: mm_iq4_nl(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs); break;
    case MMX_IQ4_XS: mm_iq4_xs(r0, r1, w, ws, a, as, nTok, y, ys, nb); break;
    default: unreachable();
  }
}

// kind: abi.ts MMX_*; rows: each expert's rows; ws: weight row bytes; nb: blocks per row; as / axs: bytes per
// activation / side-table row (a slot's nTok rows are consecutive); output rows rows * 4 bytes apart
export function mm_experts(r0: i32, r1: i32, kind: i32, tbl: usize, rows: i32, ws: usize, nb: i32, as: usize, axs: usize): void {
  let s = r0 / rows, r = r0 - s * rows;
  const ys = <usize>rows << 2;
  while (r0 < r1) {
    const e = tbl + <usize>s * MMX_SLOT_BYTES;
    const hi = min(rows, r + (r1 - r0));
    one(kind, r, hi, <usize>load<u32>(e), ws, <usize>load<u32>(e, 4), as, load<i32>(e, 16), <usize>load<u32>(e, 12), ys, nb, <usize>load<u32>(e, 8), axs);
    r0 += hi - r; s++; r = 0;
  }
}

// moe_sum over tokens [t0, t1): out[:, t] = ((y[:, 0, t] * w[0, t] + y[:, 1, t] * w[1, t]) + ...) for n-wide rows of
// k slots: f32 products and f32 adds in slot order, per element the reference's (src/backends/reference/moe.ts
// moeSum) operations; 4 elements per SIMD op change nothing (IEEE lanes, no fused multiply-add)
export function moe_sum(t0: i32, t1: i32, y: usize, w: usize, out: usize, n: i32, k: i32): void {
  const rowBytes = <usize>n << 2;
  for (let t = t0; t < t1; t++) {
    const o = out + <usize>t * rowBytes, b = y + <usize>t * <usize>k * rowBytes, wt = w + (<usize>t * <usize>k << 2);
    const w0 = load<f32>(wt);
    let c = 0;
    for (; c + 4 <= n; c += 4) {
      const off = <usize>c << 2;
      let s = f32x4.mul(v128.load(b + off), f32x4.splat(w0));
      for (let i = 1; i < k; i++) s = f32x4.add(s, f32x4.mul(v128.load(b + <usize>i * rowBytes + off), f32x4.splat(load<f32>(wt + (<usize>i << 2)))));
      v128.store(o + off, s);
    }
    for (; c < n; c++) {
      const off = <usize>c << 2;
      let s = load<f32>(b + off) * w0;
      for (let i = 1; i < k; i++) s += load<f32>(b + <usize>i * rowBytes + off) * load<f32>(wt + (<usize>i << 2));
      store<f32>(o + off, s);
    }
  }
}
