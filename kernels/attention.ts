import { FLASH_CH, AG_DR_BLOCK, AG_DR_SC, AG_DR_SCLEN, AG_DR_MX, AG_DR_ACC, AG_DR_ITEMS, DEC_SB, AG_DEC_HEADS, AG_N_TOKENS, AG_SOFTCAP, AG_SEQ_STRIDE, AG_KV_BASE, AG_BATCH, AG_GQA, AG_HEAD_DIM, AG_K, AG_KF, AG_KV_STRIDE, AG_N_HEAD, AG_OUT, AG_OUT_STRIDE, AG_P16, AG_POSITIONS, AG_Q, AG_Q_STRIDE, AG_SCALE, AG_SCRATCH, AG_SCRATCH_BYTES, AG_SLICE, AG_V, AG_VT, AG_WINDOW, AKV_HEAD_DIM, AKV_K, AKV_KF, AKV_KV_STRIDE, AKV_MAX_POS, AKV_P16, AKV_V, AKV_VT } from './abi';
import { expf_v2, expf_v4 } from './common/expf';
import { expf_glibc } from './common/glibc';
import { tanhf } from './common/libm';
import { f2h, f16x4, h2f, h2f4, h2f4_finite, round_f16x4 } from './common/f16';
import { dot_f16_vec, dot_f16_vec2 } from './common/f16-dot';
import { window_start } from './common/window';
import { fma2, f32x4_of, hi_f64, lo_f64, reduce_add_16 } from './common/fmaf';

// ---------------------------------------------------------------------------------------------
// Attention with ggml's non-flash numerics (what llama.cpp's x86 build runs for an f16 KV cache, bit for
// bit; src/backends/reference/ops.ts attention is the same in TypeScript): Q rounded to f16; K.Q as an
// f16 mul_mat (tinyBLAS 16 lanes for a batch, ggml_vec_dot_f16 for one token); scores times the scale
// in f32; softmax with ggml_v_expf, f32 sums of 16-slot chunks added in double; the weights rounded to
// f16; V.softmax over the cache positions in the same dot order (lane = position & 15, or & 63 for one
// token, then the same reductions). Positions outside [window start, own position] weigh 0 and are
// skipped: adding a zero product leaves every lane unchanged.
// One work item = (query token, head). Arguments: the parameter block at pp (AG_* in kernels/abi.ts); for a
// batch it names the f32 K rows and transposed f32 V that attn_kv_f32 prepared.
export function attn_ggml(r0: i32, r1: i32, pp: usize): void {
  const q = <usize>load<i32>(pp, AG_Q), qs = <usize>load<i32>(pp, AG_Q_STRIDE), k = <usize>load<i32>(pp, AG_K), v = <usize>load<i32>(pp, AG_V);
  const kvs = <usize>load<i32>(pp, AG_KV_STRIDE), o = <usize>load<i32>(pp, AG_OUT), os = <usize>load<i32>(pp, AG_OUT_STRIDE);
  const nHead = load<i32>(pp, AG_N_HEAD), gqa = load<i32>(pp, AG_GQA), hd = load<i32>(pp, AG_HEAD_DIM);
  const scale = load<f32>(pp, AG_SCALE), window = load<i32>(pp, AG_WINDOW), pos = <usize>load<i32>(pp, AG_POSITIONS);
  const slice = load<i32>(pp, AG_SLICE), batch = load<i32>(pp, AG_BATCH) != 0;
  const kf = <usize>load<i32>(pp, AG_KF), vt = <usize>load<i32>(pp, AG_VT), p16 = <usize>load<i32>(pp, AG_P16);
  // several sequences: a token sees its own region only; batch: KF/VT start at cache row kb
  const stride = load<i32>(pp, AG_SEQ_STRIDE), kb = load<i32>(pp, AG_KV_BASE);
  // softcap as llama.cpp builds it: ggml_scale by 1/cap (an f32 multiply), tanh, ggml_scale by cap
  const cap = load<f32>(pp, AG_SOFTCAP), invCap: f32 = cap > 0 ? <f32>1 / cap : 0;
  // this thread's scratch: q rounded to f16 (hd), V lane accumulators (64 x hd), then scores
  const scr = <usize>load<i32>(pp, AG_SCRATCH) + <usize>(r0 / slice) * <usize>load<i32>(pp, AG_SCRATCH_BYTES);
  const qh = scr, acc = scr + (<usize>hd << 2), sc = acc + (<usize>hd << 8);
  const lanes: i32 = batch ? 16 : 64;
  const hb = <usize>hd << 2;
  if ((hd & 15) == 0) {
    if (batch) attn_ggml_batch(r0, r1, pp, scr); else attn_ggml_decode(r0, r1, pp, scr);
    return;
  }
  for (let r = r0; r < r1; r++) {
    const t = r / nHead, h = r - t * nHead;
    const kvo = <usize>(h / gqa) * (<usize>hd << 1);
    const p0 = load<i32>(pos + (<usize>t << 2));
    const lo = window_start(p0, stride, window);
    const qp = q + <usize>t * qs + <usize>h * hb;
    for (let i = 0; i < hd; i++) store<f32>(qh + (<usize>i << 2), h2f(f2h(load<f32>(qp + (<usize>i << 2)))));
    let mx = -Infinity;
    const g = <usize>(h / gqa);
    if (batch) {
      // tinyBLAS's 16 lanes over the head dims, on the K rows widened once per call
      const kg = kf + g * p16 * hb;
      for (let j = lo; j <= p0; j++) {
        let d = dot_f32_lanes16(kg + <usize>(j - kb) * hb, qh, hd);
        if (cap > 0) d = tanhf(d * invCap) * cap;
        const s = d * scale;
        store<f32>(sc + (<usize>j << 2), s);
        if (s > mx) mx = <f32>s;
      }
    } else {
      for (let j = lo; j <= p0; j++) {
        let d = dot_f16_vec(k + <usize>j * kvs + kvo, qh, hd);
        if (cap > 0) d = tanhf(d * invCap) * cap;
        const s = d * scale;
        store<f32>(sc + (<usize>j << 2), s);
        if (s > mx) mx = <f32>s;
      }
    }
    // softmax: chunks of 16 slots of the (padded) KV view, aligned to 16
    const sum = softmax16(sc, lo, p0, <f32>mx);
    round_weights(sc, lo, p0, <f32>(1.0 / sum));
    const op = o + <usize>t * os + <usize>h * hb;
    if (batch) {
      // V . weights with lane = position % 16 (the weights outside [lo, p0] of the 16-aligned chunks are 0),
      // one dim at a time over the transposed V: the 16 lanes stay in registers
      const vg = vt + g * <usize>hd * p16 * 4;
      const m0 = <usize>(lo & ~15), m1 = <usize>(p0 | 15) + 1;
      for (let i = 0; i < hd; i++) {
        const vr = vg + <usize>i * p16 * 4;
        let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0;
        for (let j = m0; j < m1; j += 16) {
          const wp = sc + (j << 2), vp = vr + ((j - <usize>kb) << 2);
          a0 = madd(v128.load(wp), v128.load(vp), a0);
          a1 = madd(v128.load(wp, 16), v128.load(vp, 16), a1);
          a2 = madd(v128.load(wp, 32), v128.load(vp, 32), a2);
          a3 = madd(v128.load(wp, 48), v128.load(vp, 48), a3);
        }
        store<f32>(op + (<usize>i << 2), reduce_add_16(a0, a1, a2, a3));
      }
      continue;
    }
    // V . weights: lane accumulators acc[l][0..hd), l = position % lanes
    for (let i: usize = 0; i < <usize>(lanes * hd); i += 4) v128.store(acc + (i << 2), f32x4.splat(0));
    for (let j = lo; j <= p0; j++) {
      const wv = f32x4.splat(load<f32>(sc + (<usize>j << 2)));
      const vp = v + <usize>j * kvs + kvo, ap = acc + <usize>(j & (lanes - 1)) * hb;
      let i = 0;
      for (; i + 4 <= hd; i += 4) {
        const aa = ap + (<usize>i << 2);
        v128.store(aa, f32x4.add(v128.load(aa), f32x4.mul(wv, h2f4_finite(v128.load16x4_u(vp + (<usize>i << 1))))));
      }
      for (; i < hd; i++) {
        const aa = ap + (<usize>i << 2);
        store<f32>(aa, load<f32>(aa) + load<f32>(sc + (<usize>j << 2)) * h2f(load<u16>(vp + (<usize>i << 1))));
      }
    }
    for (let i = 0; i < hd; i++) {
      const e = <usize>i << 2;
      // lanes (a vector of 4 positions' accumulators of dim i, gathered)
      let l0: v128, l1: v128, l2: v128, l3: v128;
      if (batch) {
        l0 = gather4(acc + e, hb, 0); l1 = gather4(acc + e, hb, 4); l2 = gather4(acc + e, hb, 8); l3 = gather4(acc + e, hb, 12);
      } else {
        // ggml_vec_dot_f16: lane l = (acc[l] + acc[32+l]) + (acc[16+l] + acc[48+l])
        l0 = vec_lanes(acc + e, hb, 0); l1 = vec_lanes(acc + e, hb, 4); l2 = vec_lanes(acc + e, hb, 8); l3 = vec_lanes(acc + e, hb, 12);
      }
      store<f32>(op + e, reduce_add_16(l0, l1, l2, l3));
    }
  }
}
// attn_ggml for a batch (head size % 16 == 0; K rows and transposed V widened by attn_kv_f32), same bits:
// the query heads sharing a kv head go in pairs (each K and V load serves both dots, each dot keeps its 16
// lanes), the relaxed build fuses the exact products, and item r serves token zigzag(r / nHead) (0, n-1, 1,
// n-2, ...) so a thread's contiguous slice of a causal batch is not all short or all long rows.
// Scratch per thread: q0, q1 (hd each), then two score rows.
function attn_ggml_batch(r0: i32, r1: i32, pp: usize, scr: usize): void {
  const q = <usize>load<i32>(pp, AG_Q), qs = <usize>load<i32>(pp, AG_Q_STRIDE);
  const o = <usize>load<i32>(pp, AG_OUT), os = <usize>load<i32>(pp, AG_OUT_STRIDE);
  const nHead = load<i32>(pp, AG_N_HEAD), gqa = load<i32>(pp, AG_GQA), hd = load<i32>(pp, AG_HEAD_DIM);
  const scale = load<f32>(pp, AG_SCALE), window = load<i32>(pp, AG_WINDOW), pos = <usize>load<i32>(pp, AG_POSITIONS);
  const kf = <usize>load<i32>(pp, AG_KF), vt = <usize>load<i32>(pp, AG_VT), p16 = <usize>load<i32>(pp, AG_P16);
  const stride = load<i32>(pp, AG_SEQ_STRIDE), kb = load<i32>(pp, AG_KV_BASE), nTok = load<i32>(pp, AG_N_TOKENS);
  const cap = load<f32>(pp, AG_SOFTCAP), invCap: f32 = cap > 0 ? <f32>1 / cap : 0;
  // q0, q1, the 4x2 tiles' lane-group chains (512 B), two score rows
  const hb = <usize>hd << 2, q0 = scr, q1 = scr + hb, tile = q1 + hb, sc0 = tile + 512;
  const scLen = ((<usize>load<i32>(pp, AG_SCRATCH_BYTES) - (hb << 1) - 512) >> 1) & ~63, sc1 = sc0 + scLen;
  let r = r0;
  while (r < r1) {
    const tk = r / nHead, h = r - tk * nHead;
    const two = r + 1 < r1 && h + 1 < nHead && (h + 1) / gqa == h / gqa;
    const t = (tk & 1) != 0 ? nTok - 1 - (tk >> 1) : tk >> 1;
    const g = <usize>(h / gqa);
    const p0 = load<i32>(pos + (<usize>t << 2));
    const lo = window_start(p0, stride, window);
    const qp = q + <usize>t * qs + <usize>h * hb;
    for (let i: usize = 0; i < hb; i += 16) {
      v128.store(q0 + i, round_f16x4(v128.load(qp + i)));
      if (two) v128.store(q1 + i, round_f16x4(v128.load(qp + hb + i)));
    }
    // tinyBLAS's 16 lanes over the head dims, on the K rows widened once per call
    let mx0: f32 = -Infinity, mx1: f32 = -Infinity;
    const kg = kf + g * p16 * hb;
    if (two) {
      let j = lo;
      // 4 keys x 2 queries per pass, one lane group (4 of the 16 tinyBLAS lanes) at a time: 8 independent
      // chains, 6 loads per 8 multiply-adds (V8 hoists a block's loads: 6 + 8 vectors fit its 15 registers);
      // each lane group's chains go to the tile scratch, then ggml's 16-lane reductions
      for (; j + 3 <= p0; j += 4) {
        const kr = kg + <usize>(j - kb) * hb;
        for (let g: usize = 0; g < 64; g += 16) {
          const z = f32x4.splat(0);
          let a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
          for (let i: usize = g; i < hb; i += 64) {
            const k0 = v128.load(kr + i), k1 = v128.load(kr + hb + i), k2 = v128.load(kr + 2 * hb + i), k3 = v128.load(kr + 3 * hb + i);
            const x0 = v128.load(q0 + i), x1 = v128.load(q1 + i);
            a0 = madd(k0, x0, a0); b0 = madd(k0, x1, b0);
            a1 = madd(k1, x0, a1); b1 = madd(k1, x1, b1);
            a2 = madd(k2, x0, a2); b2 = madd(k2, x1, b2);
            a3 = madd(k3, x0, a3); b3 = madd(k3, x1, b3);
          }
          v128.store(tile + g, a0); v128.store(tile + g, a1, 64); v128.store(tile + g, a2, 128); v128.store(tile + g, a3, 192);
          v128.store(tile + g, b0, 256); v128.store(tile + g, b1, 320); v128.store(tile + g, b2, 384); v128.store(tile + g, b3, 448);
        }
        for (let k: usize = 0; k < 4; k++) {
          const ta = tile + (k << 6), tb = ta + 256;
          let d0 = reduce_add_16(v128.load(ta), v128.load(ta, 16), v128.load(ta, 32), v128.load(ta, 48));
          if (cap > 0) d0 = tanhf(d0 * invCap) * cap;
          const s0 = d0 * scale;
          store<f32>(sc0 + ((<usize>j + k) << 2), s0);
          if (s0 > mx0) mx0 = s0;
          let d1 = reduce_add_16(v128.load(tb), v128.load(tb, 16), v128.load(tb, 32), v128.load(tb, 48));
          if (cap > 0) d1 = tanhf(d1 * invCap) * cap;
          const s1 = d1 * scale;
          store<f32>(sc1 + ((<usize>j + k) << 2), s1);
          if (s1 > mx1) mx1 = s1;
        }
      }
      for (; j <= p0; j++) {
        const kr = kg + <usize>(j - kb) * hb;
        const z = f32x4.splat(0);
        let a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
        // each K vector serves both queries right away (few live registers: no accumulator spills)
        for (let i: usize = 0; i < hb; i += 64) {
          let kv = v128.load(kr + i);
          a0 = madd(kv, v128.load(q0 + i), a0); b0 = madd(kv, v128.load(q1 + i), b0);
          kv = v128.load(kr + i, 16);
          a1 = madd(kv, v128.load(q0 + i, 16), a1); b1 = madd(kv, v128.load(q1 + i, 16), b1);
          kv = v128.load(kr + i, 32);
          a2 = madd(kv, v128.load(q0 + i, 32), a2); b2 = madd(kv, v128.load(q1 + i, 32), b2);
          kv = v128.load(kr + i, 48);
          a3 = madd(kv, v128.load(q0 + i, 48), a3); b3 = madd(kv, v128.load(q1 + i, 48), b3);
        }
        let d0 = reduce_add_16(a0, a1, a2, a3);
        if (cap > 0) d0 = tanhf(d0 * invCap) * cap;
        const s0 = d0 * scale;
        store<f32>(sc0 + (<usize>j << 2), s0);
        if (s0 > mx0) mx0 = s0;
        let d1 = reduce_add_16(b0, b1, b2, b3);
        if (cap > 0) d1 = tanhf(d1 * invCap) * cap;
        const s1 = d1 * scale;
        store<f32>(sc1 + (<usize>j << 2), s1);
        if (s1 > mx1) mx1 = s1;
      }
    } else {
      for (let j = lo; j <= p0; j++) {
        let d0 = dot_f32_lanes16(kg + <usize>(j - kb) * hb, q0, hd);
        if (cap > 0) d0 = tanhf(d0 * invCap) * cap;
        const s0 = d0 * scale;
        store<f32>(sc0 + (<usize>j << 2), s0);
        if (s0 > mx0) mx0 = s0;
      }
    }
    round_weights(sc0, lo, p0, <f32>(1.0 / softmax16(sc0, lo, p0, mx0)));
    if (two) round_weights(sc1, lo, p0, <f32>(1.0 / softmax16(sc1, lo, p0, mx1)));
    // V . weights with lane = position % 16 (the weights outside [lo, p0] of the 16-aligned chunks are 0),
    // one dim at a time over the transposed V: the 16 lanes of each head stay in registers
    const op = o + <usize>t * os + <usize>h * hb;
    const vg = vt + g * <usize>hd * p16 * 4;
    const m0 = <usize>(lo & ~15), m1 = <usize>(p0 | 15) + 1;
    if (two) {
      // 4 dims x 2 heads per pass, one lane group (positions 4g..4g+3 of each 16) at a time: 8 independent
      // chains, 6 loads per 8 multiply-adds; the lane groups' chains go to the tile scratch, then ggml's
      // 16-lane reductions
      const ps = p16 << 2;
      for (let i = 0; i < hd; i += 4) {
        const vr = vg + <usize>i * ps - (<usize>kb << 2);
        for (let g: usize = 0; g < 64; g += 16) {
          const z = f32x4.splat(0);
          let a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
          for (let j = m0; j < m1; j += 16) {
            const vp = vr + (j << 2) + g, jo = (j << 2) + g;
            const x0 = v128.load(vp), x1 = v128.load(vp + ps), x2 = v128.load(vp + 2 * ps), x3 = v128.load(vp + 3 * ps);
            const w0 = v128.load(sc0 + jo), w1 = v128.load(sc1 + jo);
            a0 = madd(w0, x0, a0); b0 = madd(w1, x0, b0);
            a1 = madd(w0, x1, a1); b1 = madd(w1, x1, b1);
            a2 = madd(w0, x2, a2); b2 = madd(w1, x2, b2);
            a3 = madd(w0, x3, a3); b3 = madd(w1, x3, b3);
          }
          v128.store(tile + g, a0); v128.store(tile + g, a1, 64); v128.store(tile + g, a2, 128); v128.store(tile + g, a3, 192);
          v128.store(tile + g, b0, 256); v128.store(tile + g, b1, 320); v128.store(tile + g, b2, 384); v128.store(tile + g, b3, 448);
        }
        for (let k: usize = 0; k < 4; k++) {
          const ta = tile + (k << 6), tb = ta + 256;
          store<f32>(op + ((<usize>i + k) << 2), reduce_add_16(v128.load(ta), v128.load(ta, 16), v128.load(ta, 32), v128.load(ta, 48)));
          store<f32>(op + hb + ((<usize>i + k) << 2), reduce_add_16(v128.load(tb), v128.load(tb, 16), v128.load(tb, 32), v128.load(tb, 48)));
        }
      }
    } else {
      for (let i = 0; i < hd; i++) {
        const vr = vg + <usize>i * p16 * 4 - (<usize>kb << 2);
        const z = f32x4.splat(0);
        let a0 = z, a1 = z, a2 = z, a3 = z;
        for (let j = m0; j < m1; j += 16) {
          const vp = vr + (j << 2), w0 = sc0 + (j << 2);
          a0 = madd(v128.load(w0), v128.load(vp), a0); a1 = madd(v128.load(w0, 16), v128.load(vp, 16), a1);
          a2 = madd(v128.load(w0, 32), v128.load(vp, 32), a2); a3 = madd(v128.load(w0, 48), v128.load(vp, 48), a3);
        }
        store<f32>(op + (<usize>i << 2), reduce_add_16(a0, a1, a2, a3));
      }
    }
    r += two ? 2 : 1;
  }
}
// attn_ggml for one query token per item (decode; head size % 16 == 0), same bits, shaped for memory: a
// decode step is bound by reading K and V, whose rows interleave the kv heads (a head's 2*hd bytes every
// kvs), so one pass over the positions serves all of this thread's heads of the token (up to DEC_DIMS / hd
// at once, AG_DEC_HEADS): the thread reads the contiguous span of its kv heads from each row. The query heads sharing a
// kv head (GQA) go in pairs, each K and V value widened once for both; the relaxed build fuses the (exact)
// products. V . weights runs lane-major: ggml_vec_dot_f16's accumulator of (lane l = position & 63, 16 dims)
// stays in registers over the positions l, l+64, ... of a superblock of DEC_SB positions (its adds in
// position order, as before), whose V spans are first copied in lane order.
// f16 values are widened 8 per v128 load, even and odd dims apart (f16_even_bits / f16_odd_bits), without
// f16x4's rebias by 2^112: that factor rides on the other operand instead (the paired queries, the weights),
// which leaves every product's exact value, hence every rounding, as it was. Lanes then hold dims in the order
// 0,2,4,6 | 1,3,5,7 per 8-dim group (queries and accumulators alike), undone by the final reduction's stores.
// Scratch per thread, dims = AG_DEC_HEADS x hd: q (dims), the paired heads' q (x 2^112, lane order; dims),
// 64 lane sums, acc (64 x dims: per head and 4-dim group, its 64 lanes in 1 KiB (groups 1040 bytes apart: 1024 aliased in L1), so the reduction loads at fixed offsets), the V copy (DEC_SB x dims f16), then one score row per head.
function attn_ggml_decode(r0: i32, r1: i32, pp: usize, scr: usize): void {
  const q = <usize>load<i32>(pp, AG_Q), qs = <usize>load<i32>(pp, AG_Q_STRIDE), k = <usize>load<i32>(pp, AG_K), v = <usize>load<i32>(pp, AG_V);
  const kvs = <usize>load<i32>(pp, AG_KV_STRIDE), o = <usize>load<i32>(pp, AG_OUT), os = <usize>load<i32>(pp, AG_OUT_STRIDE);
  const nHead = load<i32>(pp, AG_N_HEAD), gqa = load<i32>(pp, AG_GQA), hd = load<i32>(pp, AG_HEAD_DIM);
  const scale = load<f32>(pp, AG_SCALE), window = load<i32>(pp, AG_WINDOW), pos = <usize>load<i32>(pp, AG_POSITIONS);
  const stride = load<i32>(pp, AG_SEQ_STRIDE);
  const cap = load<f32>(pp, AG_SOFTCAP), invCap: f32 = cap > 0 ? <f32>1 / cap : 0;
  const hb = <usize>hd << 2, maxh = load<i32>(pp, AG_DEC_HEADS), dims = <usize>(maxh * hd);
  const qh = scr, qz = qh + (dims << 2), tmp = qz + (dims << 2), acc = tmp + 256, vcp = acc + dims * 260;
  const sc = vcp + ((<usize>DEC_SB * dims) << 1);
  const scLen = ((<usize>load<i32>(pp, AG_SCRATCH_BYTES) - (sc - scr)) / <usize>maxh) & ~63;
  const paired = (hd & 63) == 0, nb = DEC_SB >> 6;
  let r = r0;
  while (r < r1) {
    // heads [ha, hb) of token t: up to maxh of this thread's items
    const t = r / nHead, ha = r - t * nHead, hz = min(min(nHead, ha + maxh), ha + (r1 - r));
    const p0 = load<i32>(pos + (<usize>t << 2));
    const lo = window_start(p0, stride, window);
    const qp = q + <usize>t * qs;
    decode_queries(qp + <usize>ha * hb, qh, qz, <usize>(hz - ha) * hb, paired);
    // K . q for every head, row by row; the maxima in tmp's slots... kept in the score rows' first free slot
    for (let h = ha; h < hz; h++) store<f32>(mxSlot(sc, scLen, h - ha, p0), -Infinity);
    for (let j = lo; j <= p0; j++) {
      const kr = k + <usize>j * kvs;
      for (let h = ha; h < hz; ) {
        const two = paired && h + 1 < hz && (h + 1) / gqa == h / gqa;
        const kp = kr + <usize>(h / gqa) * (<usize>hd << 1), i0 = <usize>(h - ha);
        const qa = qh + i0 * hb;
        let d0: f32, d1: f32 = 0;
        if (two) {
          const za = qz + i0 * hb;
          dot2_f16_bits(kp, za, za + hb, hd, 0, 0, tmp); dot2_f16_bits(kp, za, za + hb, hd, 0, 1, tmp);
          dot2_f16_bits(kp, za, za + hb, hd, 1, 0, tmp); dot2_f16_bits(kp, za, za + hb, hd, 1, 1, tmp);
          d0 = reduce_eo16(tmp); d1 = reduce_eo16(tmp + 128);
        } else {
          d0 = dot_f16_vec(kp, qa, hd);
        }
        score(sc + i0 * scLen, scLen, j, p0, d0, cap, invCap, scale);
        if (two) score(sc + (i0 + 1) * scLen, scLen, j, p0, d1, cap, invCap, scale);
        h += two ? 2 : 1;
      }
    }
    for (let h = ha; h < hz; h++) {
      const sr = sc + <usize>(h - ha) * scLen;
      round_weights_up(sr, lo, p0, <f32>(1.0 / softmax16(sr, lo, p0, load<f32>(mxSlot(sc, scLen, h - ha, p0)))));
    }
    // V . weights, lane-major over superblocks: first the superblock's V spans of these kv heads are copied in
    // lane order (row j to slot (j & 63) * DEC_SB/64 + (j - sb) / 64), one sequential read of the cache
    const kvA = <usize>(ha / gqa) * (<usize>hd << 1), span = <usize>((hz - 1) / gqa + 1) * (<usize>hd << 1) - kvA;
    const base = lo & ~63;
    for (let sb = base; sb <= p0; sb += DEC_SB) {
      const end = min(sb + DEC_SB, p0 + 1), first = sb == base;
      for (let j = max(sb, lo); j < end; j++) {
        const src = v + <usize>j * kvs + kvA, dst = vcp + <usize>((j & 63) * nb + ((j - sb) >> 6)) * span;
        for (let i: usize = 0; i < span; i += 32) { v128.store(dst + i, v128.load(src + i)); v128.store(dst + i, v128.load(src + i, 16), 16); }
      }
      for (let h = ha; h < hz; ) {
        const two = paired && h + 1 < hz && (h + 1) / gqa == h / gqa;
        const i0 = <usize>(h - ha), w0p = sc + i0 * scLen, w1p = w0p + scLen;
        const vo = <usize>(h / gqa) * (<usize>hd << 1) - kvA;
        for (let l = 0; l < 64; l++) {
          let j0 = sb + l;
          if (j0 < lo) j0 += 64;
          const ap0 = acc + i0 * hb * 65 + (<usize>l << 4);
          v_lane_pass(ap0, ap0 + hb * 65, vcp + <usize>(l * nb) * span + vo, span, sb, j0, end, w0p, w1p, hb, two, first);
        }
        h += two ? 2 : 1;
      }
    }
    // ggml_vec_dot_f16's reduction per dim: lane l = (acc[l] + acc[32+l]) + (acc[16+l] + acc[48+l]), then 16 lanes
    // (reduce_add_16's tree), computed for 4 dims at once: the same adds lane-wise, on contiguous loads
    for (let h = ha; h < hz; h++) {
      const op = o + <usize>t * os + <usize>h * hb, ah = acc + <usize>(h - ha) * hb * 65;
      for (let e: usize = 0; e < hb; e += 32) {
        const ev = reduce64_4(ah + e * 65, 16), od = reduce64_4(ah + e * 65 + 1040, 16);
        v128.store(op + e, i32x4.shuffle(ev, od, 0, 4, 1, 5)); v128.store(op + e, i32x4.shuffle(ev, od, 2, 6, 3, 7), 16);
      }
    }
    r += hz - ha;
  }
}
// ---------------------------------------------------------------------------------------------
// attn_ggml_decode split over the cache rows instead of the heads (one query token, deep caches): the same
// arithmetic (same bits) in four dispatches, so that every thread streams whole cache rows (all kv heads)
// rather than its heads' share of each row, which read the cache at about half the speed (qwen3-0.6b at depth
// 4096: one thread over whole rows as fast as two over half rows). AG_DR_* name the shared buffers.
//   attn_dec_scores: items = blocks of AG_DR_BLOCK rows: K . q for every head (scores, each block's maxima)
//   attn_dec_softmax: items = heads: the row maximum, softmax16 and the weights (x 2^112), as decode
//   attn_dec_v: items = groups of 16 lanes (rows j with j & 63 in the group): V . weights into the shared lane
//     accumulators, each lane's adds in row order as in decode
//   attn_dec_out: items = heads: the 64-lane reduction and the output
// Per-item scratch (AG_SCRATCH + item * AG_SCRATCH_BYTES): the queries (as decode) and the maxima, or the lane
// group's V copy.
@inline function dr_lo(pp: usize): i32 {
  const p0 = load<i32>(<usize>load<i32>(pp, AG_POSITIONS));
  const stride = load<i32>(pp, AG_SEQ_STRIDE), window = load<i32>(pp, AG_WINDOW);
  return window_start(p0, stride, window);
}
export function attn_dec_scores(r0: i32, r1: i32, pp: usize): void {
  const q = <usize>load<i32>(pp, AG_Q), k = <usize>load<i32>(pp, AG_K), kvs = <usize>load<i32>(pp, AG_KV_STRIDE);
  const nHead = load<i32>(pp, AG_N_HEAD), gqa = load<i32>(pp, AG_GQA), hd = load<i32>(pp, AG_HEAD_DIM);
  const scale = load<f32>(pp, AG_SCALE), cap = load<f32>(pp, AG_SOFTCAP), invCap: f32 = cap > 0 ? <f32>1 / cap : 0;
  const p0 = load<i32>(<usize>load<i32>(pp, AG_POSITIONS)), lo = dr_lo(pp);
  const blk = load<i32>(pp, AG_DR_BLOCK), sc = <usize>load<i32>(pp, AG_DR_SC), scLen = <usize>load<i32>(pp, AG_DR_SCLEN);
  const mxAll = <usize>load<i32>(pp, AG_DR_MX);
  const hb = <usize>hd << 2, dims = <usize>nHead * hb, paired = (hd & 63) == 0;
  for (let b = r0; b < r1; b++) {
    const scr = <usize>load<i32>(pp, AG_SCRATCH) + <usize>b * <usize>load<i32>(pp, AG_SCRATCH_BYTES);
    const qh = scr, qz = qh + dims, tmp = qz + dims, mx = tmp + 256;
    decode_queries(q, qh, qz, dims, paired);
    for (let h = 0; h < nHead; h++) store<f32>(mx + (<usize>h << 2), -Infinity);
    const j1 = min(p0 + 1, lo + (b + 1) * blk);
    for (let j = lo + b * blk; j < j1; j++) {
      const kr = k + <usize>j * kvs;
      for (let h = 0; h < nHead; ) {
        const two = paired && h + 1 < nHead && (h + 1) / gqa == h / gqa;
        const kp = kr + <usize>(h / gqa) * (<usize>hd << 1), i0 = <usize>h;
        let d0: f32, d1: f32 = 0;
        if (two) {
          const za = qz + i0 * hb;
          dot2_f16_bits(kp, za, za + hb, hd, 0, 0, tmp); dot2_f16_bits(kp, za, za + hb, hd, 0, 1, tmp);
          dot2_f16_bits(kp, za, za + hb, hd, 1, 0, tmp); dot2_f16_bits(kp, za, za + hb, hd, 1, 1, tmp);
          d0 = reduce_eo16(tmp); d1 = reduce_eo16(tmp + 128);
        } else {
          d0 = dot_f16_vec(kp, qh + i0 * hb, hd);
        }
        dr_score(sc + i0 * scLen, mx + (i0 << 2), j, d0, cap, invCap, scale);
        if (two) dr_score(sc + (i0 + 1) * scLen, mx + ((i0 + 1) << 2), j, d1, cap, invCap, scale);
        h += two ? 2 : 1;
      }
    }
    for (let h = 0; h < nHead; h++) store<f32>(mxAll + (<usize>(b * nHead + h) << 2), load<f32>(mx + (<usize>h << 2)));
  }
}
@inline function dr_score(row: usize, m: usize, j: i32, d: f32, cap: f32, invCap: f32, scale: f32): void {
  if (cap > 0) d = tanhf(d * invCap) * cap;
  const s = d * scale;
  store<f32>(row + (<usize>j << 2), s);
  if (s > load<f32>(m)) store<f32>(m, s);
}
export function attn_dec_softmax(r0: i32, r1: i32, pp: usize): void {
  const nHead = load<i32>(pp, AG_N_HEAD), p0 = load<i32>(<usize>load<i32>(pp, AG_POSITIONS)), lo = dr_lo(pp);
  const sc = <usize>load<i32>(pp, AG_DR_SC), scLen = <usize>load<i32>(pp, AG_DR_SCLEN), mxAll = <usize>load<i32>(pp, AG_DR_MX);
  const items = load<i32>(pp, AG_DR_ITEMS);
  for (let h = r0; h < r1; h++) {
    let mx: f32 = -Infinity;
    for (let b = 0; b < items; b++) { const m = load<f32>(mxAll + (<usize>(b * nHead + h) << 2)); if (m > mx) mx = m; }
    const sr = sc + <usize>h * scLen;
    round_weights_up(sr, lo, p0, <f32>(1.0 / softmax16(sr, lo, p0, mx)));
  }
}
export function attn_dec_v(r0: i32, r1: i32, pp: usize): void {
  const v = <usize>load<i32>(pp, AG_V), kvs = <usize>load<i32>(pp, AG_KV_STRIDE);
  const nHead = load<i32>(pp, AG_N_HEAD), gqa = load<i32>(pp, AG_GQA), hd = load<i32>(pp, AG_HEAD_DIM);
  const p0 = load<i32>(<usize>load<i32>(pp, AG_POSITIONS)), lo = dr_lo(pp);
  const sc = <usize>load<i32>(pp, AG_DR_SC), scLen = <usize>load<i32>(pp, AG_DR_SCLEN), acc = <usize>load<i32>(pp, AG_DR_ACC);
  const hb = <usize>hd << 2, span = <usize>(nHead / gqa) * (<usize>hd << 1), nb = DEC_SB >> 6, paired = (hd & 63) == 0;
  const base = lo & ~63;
  for (let g = r0; g < r1; g++) {
    const vcp = <usize>load<i32>(pp, AG_SCRATCH) + <usize>g * <usize>load<i32>(pp, AG_SCRATCH_BYTES);
    const l0 = g << 4;
    for (let sb = base; sb <= p0; sb += DEC_SB) {
      const end = min(sb + DEC_SB, p0 + 1), first = sb == base;
      // this group's rows of the superblock, whole rows, in lane order (lane l - l0, then (j - sb) / 64)
      for (let c = sb + l0; c < end; c += 64) {
        for (let j = max(c, lo); j < min(c + 16, end); j++) {
          const src = v + <usize>j * kvs, dst = vcp + <usize>(((j & 63) - l0) * nb + ((j - sb) >> 6)) * span;
          for (let i: usize = 0; i < span; i += 32) { v128.store(dst + i, v128.load(src + i)); v128.store(dst + i, v128.load(src + i, 16), 16); }
        }
      }
      for (let h = 0; h < nHead; ) {
        const two = paired && h + 1 < nHead && (h + 1) / gqa == h / gqa;
        const i0 = <usize>h, w0p = sc + i0 * scLen, w1p = w0p + scLen;
        const vo = <usize>(h / gqa) * (<usize>hd << 1);
        for (let l = l0; l < l0 + 16; l++) {
          let j0 = sb + l;
          if (j0 < lo) j0 += 64;
          const ap0 = acc + i0 * hb * 65 + (<usize>l << 4);
          v_lane_pass(ap0, ap0 + hb * 65, vcp + <usize>((l - l0) * nb) * span + vo, span, sb, j0, end, w0p, w1p, hb, two, first);
        }
        h += two ? 2 : 1;
      }
    }
  }
}
export function attn_dec_out(r0: i32, r1: i32, pp: usize): void {
  const o = <usize>load<i32>(pp, AG_OUT), hd = load<i32>(pp, AG_HEAD_DIM), acc = <usize>load<i32>(pp, AG_DR_ACC);
  const hb = <usize>hd << 2;
  for (let h = r0; h < r1; h++) {
    const op = o + <usize>h * hb, ah = acc + <usize>h * hb * 65;
    for (let e: usize = 0; e < hb; e += 32) {
      const ev = reduce64_4(ah + e * 65, 16), od = reduce64_4(ah + e * 65 + 1040, 16);
      v128.store(op + e, i32x4.shuffle(ev, od, 0, 4, 1, 5)); v128.store(op + e, i32x4.shuffle(ev, od, 2, 6, 3, 7), 16);
    }
  }
}
// where a score row keeps its running maximum: the last slot of the row (past the padded chunks)
@inline function mxSlot(sc: usize, scLen: usize, i: i32, p0: i32): usize { return sc + <usize>i * scLen + scLen - 4; }
// one head's score of row j (softcap, scale), stored, the row's maximum updated
@inline function score(row: usize, scLen: usize, j: i32, p0: i32, d: f32, cap: f32, invCap: f32, scale: f32): void {
  if (cap > 0) d = tanhf(d * invCap) * cap;
  const s = d * scale;
  store<f32>(row + (<usize>j << 2), s);
  const m = row + scLen - 4;
  if (s > load<f32>(m)) store<f32>(m, s);
}
// lanes 4g..4g+3 of ggml_vec_dot_f16's combined 16 lanes for one f16 K row against two queries (n % 64 == 0),
// stored at tmp + 16g (query a) and tmp + 64 + 16g (query b): each keeps the one-query order
@inline function dot2_f16_lanes(w: usize, a: usize, b: usize, n: i32, g: usize, tmp: usize): void {
  let s0 = f32x4.splat(0), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
  for (let i = 0; i < n; i += 64) {
    const wp = w + (<usize>i << 1) + (g << 3), o = (<usize>i << 2) + (g << 4);
    const k0 = f16x4(wp), k1 = f16x4(wp + 32), k2 = f16x4(wp + 64), k3 = f16x4(wp + 96);
    s0 = madd(k0, v128.load(a + o), s0); t0 = madd(k0, v128.load(b + o), t0);
    s1 = madd(k1, v128.load(a + o, 64), s1); t1 = madd(k1, v128.load(b + o, 64), t1);
    s2 = madd(k2, v128.load(a + o, 128), s2); t2 = madd(k2, v128.load(b + o, 128), t2);
    s3 = madd(k3, v128.load(a + o, 192), s3); t3 = madd(k3, v128.load(b + o, 192), t3);
  }
  v128.store(tmp + (g << 4), f32x4.add(f32x4.add(s0, s2), f32x4.add(s1, s3)));
  v128.store(tmp + 64 + (g << 4), f32x4.add(f32x4.add(t0, t2), f32x4.add(t1, t3)));
}
// the decode queries: `bytes` of f32 at qp rounded to f16 into qh and, for GQA pairs (paired), also x 2^112 in the
// 8-wide lane order (0,2,4,6 | 1,3,5,7 per 8 dims) into qz
@inline function decode_queries(qp: usize, qh: usize, qz: usize, bytes: usize, paired: bool): void {
  for (let i: usize = 0; i < bytes; i += 16) v128.store(qh + i, round_f16x4(v128.load(qp + i)));
  if (!paired) return;
  const up = f32x4.splat(reinterpret<f32>(0x77800000));
  for (let i: usize = 0; i < bytes; i += 32) {
    const a = v128.load(qh + i), b = v128.load(qh + i, 16);
    v128.store(qz + i, f32x4.mul(i32x4.shuffle(a, b, 0, 2, 4, 6), up));
    v128.store(qz + i, f32x4.mul(i32x4.shuffle(a, b, 1, 3, 5, 7), up), 16);
  }
}
// V . weights for lane l of one head (or a GQA pair: two) over a superblock's rows j0, j0 + 64, ... < end, 16 dims
// at a time in registers: the lane's accumulators at ap0 / ap1 (4-dim groups 1040 bytes apart; zero when first),
// its V rows copied in lane order at lrow (span bytes apart, unscaled f16 bits), the weights (x 2^112) at w0p / w1p
@inline function v_lane_pass(ap0: usize, ap1: usize, lrow: usize, span: usize, sb: i32, j0: i32, end: i32, w0p: usize, w1p: usize,
  hb: usize, two: bool, first: bool): void {
  for (let d: usize = 0; d < hb; d += 64) {
    const z = f32x4.splat(0);
    let a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
    if (!first) {
      const g0 = ap0 + d * 65, g1 = ap1 + d * 65;
      a0 = v128.load(g0); a1 = v128.load(g0, 1040); a2 = v128.load(g0, 2080); a3 = v128.load(g0, 3120);
      if (two) { b0 = v128.load(g1); b1 = v128.load(g1, 1040); b2 = v128.load(g1, 2080); b3 = v128.load(g1, 3120); }
    }
    for (let j = j0; j < end; j += 64) {
      const vp = lrow + <usize>((j - sb) >> 6) * span + (d >> 1);
      const y0 = v128.load(vp), y1 = v128.load(vp, 16);
      const x0 = f16_even_bits(y0), x1 = f16_odd_bits(y0), x2 = f16_even_bits(y1), x3 = f16_odd_bits(y1);
      const w0 = v128.load32_splat(w0p + (<usize>j << 2));
      a0 = madd(w0, x0, a0); a1 = madd(w0, x1, a1); a2 = madd(w0, x2, a2); a3 = madd(w0, x3, a3);
      if (two) {
        const w1 = v128.load32_splat(w1p + (<usize>j << 2));
        b0 = madd(w1, x0, b0); b1 = madd(w1, x1, b1); b2 = madd(w1, x2, b2); b3 = madd(w1, x3, b3);
      }
    }
    const g0 = ap0 + d * 65, g1 = ap1 + d * 65;
    v128.store(g0, a0); v128.store(g0, a1, 1040); v128.store(g0, a2, 2080); v128.store(g0, a3, 3120);
    if (two) { v128.store(g1, b0); v128.store(g1, b1, 1040); v128.store(g1, b2, 2080); v128.store(g1, b3, 3120); }
  }
}
// f16 bits placed as f32 bits of the value / 2^112 (finite values; f16x4 without its multiply): even / odd f16
// of a v128 (dims 0,2,4,6 / 1,3,5,7)
@inline function f16_even_bits(x: v128): v128 { return v128.and(i32x4.shr_s(i32x4.shl(x, 16), 3), i32x4.splat(0x8fffffff)); }
@inline function f16_odd_bits(x: v128): v128 { return v128.and(i32x4.shr_s(x, 3), i32x4.splat(0x8fffe000)); }
// dot2_f16_lanes' sums on 8-wide loads: half u (lanes 8u..8u+7) of ggml's accumulators c and c + 2 (c = 0 or 1),
// already added (x_c + x_{c+2}, the reduction's first step), for queries a and b (x 2^112, lane order): even
// lanes at tmp + (2u + c) * 32, odd lanes 16 bytes on; query b's 128 bytes on
@inline function dot2_f16_bits(w: usize, a: usize, b: usize, n: i32, u: usize, c: usize, tmp: usize): void {
  let se = f32x4.splat(0), so = se, te = se, to = se, se2 = se, so2 = se, te2 = se, to2 = se;
  for (let i = 0; i < n; i += 64) {
    const e0 = <usize>i + (c << 4) + (u << 3), e1 = e0 + 32;
    const k0 = v128.load(w + (e0 << 1)), k1 = v128.load(w + (e1 << 1));
    const k0e = f16_even_bits(k0), k0o = f16_odd_bits(k0), k1e = f16_even_bits(k1), k1o = f16_odd_bits(k1);
    se = madd(k0e, v128.load(a + (e0 << 2)), se); so = madd(k0o, v128.load(a + (e0 << 2), 16), so);
    te = madd(k0e, v128.load(b + (e0 << 2)), te); to = madd(k0o, v128.load(b + (e0 << 2), 16), to);
    se2 = madd(k1e, v128.load(a + (e1 << 2)), se2); so2 = madd(k1o, v128.load(a + (e1 << 2), 16), so2);
    te2 = madd(k1e, v128.load(b + (e1 << 2)), te2); to2 = madd(k1o, v128.load(b + (e1 << 2), 16), to2);
  }
  const o = tmp + (((u << 1) + c) << 5);
  v128.store(o, f32x4.add(se, se2)); v128.store(o, f32x4.add(so, so2), 16);
  v128.store(o, f32x4.add(te, te2), 128); v128.store(o, f32x4.add(to, to2), 144);
}
// dot_f16_vec's final reduction from dot2_f16_bits' partial sums (one query: tmp, the other: tmp + 128):
// combined lanes (x0 + x2) + (x1 + x3) back in lane order, then reduce_add_16
@inline function reduce_eo16(t: usize): f32 {
  // half u, c: even at t + (2u + c) * 32, odd 16 bytes on
  const e0 = f32x4.add(v128.load(t), v128.load(t, 32)), o0 = f32x4.add(v128.load(t, 16), v128.load(t, 48));
  const e1 = f32x4.add(v128.load(t, 64), v128.load(t, 96)), o1 = f32x4.add(v128.load(t, 80), v128.load(t, 112));
  return reduce_add_16(i32x4.shuffle(e0, o0, 0, 4, 1, 5), i32x4.shuffle(e0, o0, 2, 6, 3, 7), i32x4.shuffle(e1, o1, 0, 4, 1, 5), i32x4.shuffle(e1, o1, 2, 6, 3, 7));
}
// ---------------------------------------------------------------------------------------------
// Flash attention with llama.cpp's numerics (ggml_compute_forward_flash_attn_ext_f16_one_chunk, x86 AVX-512
// build; src/backends/reference/ops.ts flashAttention is the same in TypeScript), one work item = (query
// token, head), no score matrix: Q rounded to f16; per cache row j of [window start, own position] in order:
// s = ggml_vec_dot_f16(K_j, Q) * scale (softcap: scale / cap, then cap * tanhf), online softmax with glibc
// expf; a new maximum M rescales the f16 accumulator (f16(VKQ * ms)); VKQ = f16(fmaf(V_j, vs, VKQ)) per
// element; S = S * ms + vs (unfused). Output f32(VKQ) * f32(1 / S). The accumulator is kept as f16-exact f32 values.
// Same parameter block as attn_ggml (AG_*; the batch fields are unused). Head size % 4 == 0.
//
// Tiled order (flash_tiled, head size % 8 == 0): the same arithmetic per element, regrouped. Positions go in
// chunks of FLASH_CH: first every row's score and the online-softmax sequence (ms, vs per row, in row order),
// then V in 8-dim column tiles whose accumulators stay in registers over the chunk's rows. The two heads of a GQA
// pair share each K and V row's conversion (and its read). f16 rounding by adding and subtracting 1.5 * 2^13 times
// the value's binade (2^-14 at least): one f32 add rounds to the f16 unit, ties to even. That path cannot overflow
// to inf as f16 does: an accumulator value of 2^15 or more sends the item to flash_head.
export function attn_flash(r0: i32, r1: i32, pp: usize): void {
  const nHead = load<i32>(pp, AG_N_HEAD), gqa = load<i32>(pp, AG_GQA), hd = load<i32>(pp, AG_HEAD_DIM);
  const slice = load<i32>(pp, AG_SLICE);
  const scr = <usize>load<i32>(pp, AG_SCRATCH) + <usize>(r0 / slice) * <usize>load<i32>(pp, AG_SCRATCH_BYTES);
  for (let r = r0; r < r1;) {
    const t = r / nHead, h = r - t * nHead;
    if (hd & 7) {
      flash_head(t, h, pp, scr);
      r++;
    } else if ((gqa & 1) == 0 && (h & 1) == 0 && r + 1 < r1) {
      // h and h + 1 read the same kv head (gqa even)
      if (!flash_tiled2(t, h, pp, scr)) { flash_head(t, h, pp, scr); flash_head(t, h + 1, pp, scr); }
      r += 2;
    } else {
      if (!flash_tiled1(t, h, pp, scr)) flash_head(t, h, pp, scr);
      r++;
    }
  }
}
function flash_tiled1(t: i32, h: i32, pp: usize, scr: usize): bool { return flash_tiled(t, h, 1, pp, scr); }
function flash_tiled2(t: i32, h: i32, pp: usize, scr: usize): bool { return flash_tiled(t, h, 2, pp, scr); }

// f32 lanes rounded to f16 precision, e = v128.and(x, 0x7f800000) (the caller tracks it); |x| < 2^15 and finite
@inline function round_f16_binade(x: v128, e: v128): v128 {
  const c = i32x4.add(i32x4.max_u(e, i32x4.splat(0x38800000)), i32x4.splat(0x06c00000));
  return v128.or(f32x4.sub(f32x4.add(x, c), c), v128.and(x, i32x4.splat(0x80000000)));
}
// fmaf on 4 lanes: a + v * w (w an f32 splat); v an f16 value, so the product is exact in f64
@inline function fmaf4_vw(v: v128, w: v128, a: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(v, w, a);
  const wd = f64x2.promote_low_f32x4(w);
  return f32x4_of(fma2(f64x2.mul(lo_f64(v), wd), lo_f64(a)), fma2(f64x2.mul(hi_f64(v), wd), hi_f64(a)));
}
// 8 f16 (one v128) -> even dims 0,2,4,6 and odd dims 1,3,5,7 as f32 (finite values, as h2f4_finite)
@inline function f16_even(x: v128): v128 {
  return f32x4.mul(v128.and(i32x4.shr_s(i32x4.shl(x, 16), 3), i32x4.splat(0x8fffffff)), f32x4.splat(reinterpret<f32>(0x77800000)));
}
@inline function f16_odd(x: v128): v128 {
  return f32x4.mul(v128.and(i32x4.shr_s(x, 3), i32x4.splat(0x8fffe000)), f32x4.splat(reinterpret<f32>(0x77800000)));
}

// nh = 1: head h; nh = 2: heads h and h + 1 (same kv head). Returns false if an accumulator reached 2^15.
@inline function flash_tiled(t: i32, h: i32, nh: i32, pp: usize, scr: usize): bool {
  const q = <usize>load<i32>(pp, AG_Q), qs = <usize>load<i32>(pp, AG_Q_STRIDE), k = <usize>load<i32>(pp, AG_K), v = <usize>load<i32>(pp, AG_V);
  const kvs = <usize>load<i32>(pp, AG_KV_STRIDE), o = <usize>load<i32>(pp, AG_OUT), os = <usize>load<i32>(pp, AG_OUT_STRIDE);
  const gqa = load<i32>(pp, AG_GQA), hd = load<i32>(pp, AG_HEAD_DIM);
  const window = load<i32>(pp, AG_WINDOW), pos = <usize>load<i32>(pp, AG_POSITIONS);
  const stride = load<i32>(pp, AG_SEQ_STRIDE);
  const cap = load<f32>(pp, AG_SOFTCAP);
  const scale: f32 = cap > 0 ? load<f32>(pp, AG_SCALE) / cap : load<f32>(pp, AG_SCALE);
  const hb = <usize>hd << 2;
  // scratch: rounded queries, accumulators (8-dim tiles: 4 even dims, then 4 odd), per chunk row: vs, ms per
  // head, then 128 bytes for dot_f16_vec2
  const qh0 = scr, qh1 = scr + hb, acc0 = scr + 2 * hb, acc1 = scr + 3 * hb;
  const vs0 = scr + 4 * hb, ms0 = vs0 + (FLASH_CH << 2), vs1 = ms0 + (FLASH_CH << 2), ms1 = vs1 + (FLASH_CH << 2);
  const kvo = <usize>(h / gqa) * (<usize>hd << 1);
  const p0 = load<i32>(pos + (<usize>t << 2));
  const lo = window_start(p0, stride, window);
  const qp = q + <usize>t * qs + <usize>h * hb;
  for (let i: usize = 0; i < hb; i += 16) {
    v128.store(qh0 + i, round_f16x4(v128.load(qp + i)));
    v128.store(acc0 + i, f32x4.splat(0));
    if (nh == 2) {
      v128.store(qh1 + i, round_f16x4(v128.load(qp + hb + i)));
      v128.store(acc1 + i, f32x4.splat(0));
    }
  }
  const EXP = i32x4.splat(0x7f800000);
  let big = i32x4.splat(0);
  let m0: f32 = -Infinity, sum0: f32 = 0, m1: f32 = -Infinity, sum1: f32 = 0;
  for (let c0 = lo; c0 <= p0; c0 += FLASH_CH) {
    const n = min(FLASH_CH, p0 + 1 - c0);
    // scores and the softmax sequence, row order
    let rescale = false;
    for (let j = 0; j < n; j++) {
      const kp = k + <usize>(c0 + j) * kvs + kvo;
      let s0: f32, s1: f32 = 0;
      if (nh == 2) {
        const d = dot_f16_vec2(kp, qh0, qh1, hd, ms1 + (FLASH_CH << 2));
        s0 = f32x4.extract_lane(d, 0) * scale; s1 = f32x4.extract_lane(d, 1) * scale;
      } else {
        s0 = dot_f16_vec(kp, qh0, hd) * scale;
      }
      if (cap > 0) { s0 = cap * tanhf(s0); if (nh == 2) s1 = cap * tanhf(s1); }
      let ms: f32 = 1, vs: f32 = 1;
      if (s0 > m0) { ms = expf_glibc(m0 - s0); m0 = s0; } else vs = expf_glibc(s0 - m0);
      store<f32>(vs0 + (<usize>j << 2), vs); store<f32>(ms0 + (<usize>j << 2), ms);
      if (ms != 1) rescale = true;
      sum0 = sum0 * ms + vs; // two roundings: llama.cpp's build does not contract this one
      if (nh == 2) {
        ms = 1; vs = 1;
        if (s1 > m1) { ms = expf_glibc(m1 - s1); m1 = s1; } else vs = expf_glibc(s1 - m1);
        store<f32>(vs1 + (<usize>j << 2), vs); store<f32>(ms1 + (<usize>j << 2), ms);
        if (ms != 1) rescale = true;
        sum1 = sum1 * ms + vs;
      }
    }
    // V: one 8-dim column tile at a time over the chunk's rows
    const vrow = v + <usize>c0 * kvs + kvo;
    for (let d: usize = 0; d < (<usize>hd << 1); d += 16) {
      const ap0 = acc0 + (d << 1), ap1 = acc1 + (d << 1);
      let a0e = v128.load(ap0), a0o = v128.load(ap0, 16), a1e = a0e, a1o = a0o;
      if (nh == 2) { a1e = v128.load(ap1); a1o = v128.load(ap1, 16); }
      let vp = vrow + d;
      for (let j = 0; j < n; j++) {
        const x = v128.load(vp);
        vp += kvs;
        const ve = f16_even(x), vo = f16_odd(x);
        if (rescale) {
          // a new maximum: the accumulator times ms, rounded to f16, before this row's V
          const s = load<f32>(ms0 + (<usize>j << 2));
          if (s != 1) {
            const sv = f32x4.splat(s);
            let y = f32x4.mul(a0e, sv), e = v128.and(y, EXP); big = i32x4.max_u(big, e); a0e = round_f16_binade(y, e);
            y = f32x4.mul(a0o, sv); e = v128.and(y, EXP); big = i32x4.max_u(big, e); a0o = round_f16_binade(y, e);
          }
          if (nh == 2) {
            const s1 = load<f32>(ms1 + (<usize>j << 2));
            if (s1 != 1) {
              const sv = f32x4.splat(s1);
              let y = f32x4.mul(a1e, sv), e = v128.and(y, EXP); big = i32x4.max_u(big, e); a1e = round_f16_binade(y, e);
              y = f32x4.mul(a1o, sv); e = v128.and(y, EXP); big = i32x4.max_u(big, e); a1o = round_f16_binade(y, e);
            }
          }
        }
        const w0 = v128.load32_splat(vs0 + (<usize>j << 2));
        let y = fmaf4_vw(ve, w0, a0e), e = v128.and(y, EXP); big = i32x4.max_u(big, e); a0e = round_f16_binade(y, e);
        y = fmaf4_vw(vo, w0, a0o); e = v128.and(y, EXP); big = i32x4.max_u(big, e); a0o = round_f16_binade(y, e);
        if (nh == 2) {
          const w1 = v128.load32_splat(vs1 + (<usize>j << 2));
          y = fmaf4_vw(ve, w1, a1e); e = v128.and(y, EXP); big = i32x4.max_u(big, e); a1e = round_f16_binade(y, e);
          y = fmaf4_vw(vo, w1, a1o); e = v128.and(y, EXP); big = i32x4.max_u(big, e); a1o = round_f16_binade(y, e);
        }
      }
      v128.store(ap0, a0e); v128.store(ap0, a0o, 16);
      if (nh == 2) { v128.store(ap1, a1e); v128.store(ap1, a1o, 16); }
    }
    // 2^15 (exponent 142): f16 rounding might have overflowed to inf; the exact path decides
    if (v128.any_true(i32x4.ge_u(big, i32x4.splat(0x47000000)))) return false;
  }
  // output: the tiles back in dim order, times 1 / S
  const op = o + <usize>t * os + <usize>h * hb;
  for (let hh = 0; hh < nh; hh++) {
    const sum = hh == 0 ? sum0 : sum1, ap = hh == 0 ? acc0 : acc1, dst = op + <usize>hh * hb;
    const inv = f32x4.splat(sum == 0 ? <f32>0 : <f32>1 / sum);
    for (let d: usize = 0; d < hb; d += 32) {
      const ev = v128.load(ap + d), od = v128.load(ap + d, 16);
      v128.store(dst + d, f32x4.mul(i32x4.shuffle(ev, od, 0, 4, 1, 5), inv));
      v128.store(dst + d, f32x4.mul(i32x4.shuffle(ev, od, 2, 6, 3, 7), inv), 16);
    }
  }
  return true;
}
// One (query token, head) in position order: the exact path (heads whose size is not a multiple of 8, and a
// recomputation when flash_tiled saw an accumulator value reach 2^15, where f16 rounding may overflow to inf).
function flash_head(t: i32, h: i32, pp: usize, scr: usize): void {
  const q = <usize>load<i32>(pp, AG_Q), qs = <usize>load<i32>(pp, AG_Q_STRIDE), k = <usize>load<i32>(pp, AG_K), v = <usize>load<i32>(pp, AG_V);
  const kvs = <usize>load<i32>(pp, AG_KV_STRIDE), o = <usize>load<i32>(pp, AG_OUT), os = <usize>load<i32>(pp, AG_OUT_STRIDE);
  const gqa = load<i32>(pp, AG_GQA), hd = load<i32>(pp, AG_HEAD_DIM);
  const window = load<i32>(pp, AG_WINDOW), pos = <usize>load<i32>(pp, AG_POSITIONS);
  const stride = load<i32>(pp, AG_SEQ_STRIDE);
  const cap = load<f32>(pp, AG_SOFTCAP);
  // llama.cpp divides the scale by the softcap once (f32), then s = cap * tanhf(s * scale)
  const scale: f32 = cap > 0 ? load<f32>(pp, AG_SCALE) / cap : load<f32>(pp, AG_SCALE);
  const hb = <usize>hd << 2, qh = scr, acc = scr + hb;
  {
    const kvo = <usize>(h / gqa) * (<usize>hd << 1);
    const p0 = load<i32>(pos + (<usize>t << 2));
    const lo = window_start(p0, stride, window);
    const qp = q + <usize>t * qs + <usize>h * hb;
    for (let i: usize = 0; i < hb; i += 16) {
      v128.store(qh + i, round_f16x4(v128.load(qp + i)));
      v128.store(acc + i, f32x4.splat(0));
    }
    let m: f32 = -Infinity, sum: f32 = 0;
    for (let j = lo; j <= p0; j++) {
      let s = dot_f16_vec(k + <usize>j * kvs + kvo, qh, hd) * scale;
      if (cap > 0) s = cap * tanhf(s);
      let ms: f32 = 1, vs: f32 = 1;
      if (s > m) {
        ms = expf_glibc(m - s);
        m = s;
        const mv = f32x4.splat(ms);
        for (let i: usize = 0; i < hb; i += 16) v128.store(acc + i, round_f16x4(f32x4.mul(v128.load(acc + i), mv)));
      } else {
        vs = expf_glibc(s - m);
      }
      // VKQ = f16(fmaf(V, vs, VKQ)): the products are exact in f64 (11 x 24 bits), fma2 rounds once to f32
      const vp = v + <usize>j * kvs + kvo;
      if (ASC_FEATURE_RELAXED_SIMD) {
        // relaxed build: relaxed_madd is fused (checked at start-up), i.e. fmaf on 4 lanes, the same bits as
        // the f64 path below at a third of its instructions (this loop is most of attention's time)
        const vv4 = f32x4.splat(vs);
        for (let i: usize = 0; i < hb; i += 16) {
          const vv = h2f4_finite(v128.load16x4_u(vp + (i >> 1)));
          v128.store(acc + i, round_f16x4(f32x4.relaxed_madd(vv, vv4, v128.load(acc + i))));
        }
      } else {
        const vd = f64x2.splat(<f64>vs);
        for (let i: usize = 0; i < hb; i += 16) {
          const vv = h2f4_finite(v128.load16x4_u(vp + (i >> 1)));
          const a = v128.load(acc + i);
          const lo2 = fma2(f64x2.mul(lo_f64(vv), vd), lo_f64(a)), hi2 = fma2(f64x2.mul(hi_f64(vv), vd), hi_f64(a));
          v128.store(acc + i, round_f16x4(f32x4_of(lo2, hi2)));
        }
      }
      sum = sum * ms + vs; // two roundings: llama.cpp's build does not contract this one
    }
    const inv = f32x4.splat(sum == 0 ? <f32>0 : <f32>1 / sum);
    const op = o + <usize>t * os + <usize>h * hb;
    for (let i: usize = 0; i < hb; i += 16) v128.store(op + i, f32x4.mul(v128.load(acc + i), inv));
  }
}
// the attention products are f16 x f16-exact values, exact in f32: a fused multiply-add rounds once like
// the multiply-then-add ggml's build does (one rounding, of the add), so the relaxed build may fuse them
@inline function madd(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, c);
  return f32x4.add(f32x4.mul(a, b), c);
}
// ggml's soft_max over the scores sc[lo..p0] (max mx): v_expf of 16-slot chunks of the 16-aligned view, the
// chunk sums added in double; slots of those chunks outside [lo, p0] become 0. Returns the sum.
@inline function softmax16(sc: usize, lo: i32, p0: i32, mx: f32): f64 {
  let sum: f64 = 0;
  const mv = f32x4.splat(mx);
  for (let c = lo & ~15; c <= p0; c += 16) {
    let e0 = f32x4.splat(0), e1 = e0, e2 = e0, e3 = e0;
    for (let g = 0; g < 4; g++) {
      const base = c + 4 * g;
      const x = f32x4.sub(v128.load(sc + (<usize>base << 2)), mv);
      let e: v128;
      if (ASC_FEATURE_RELAXED_SIMD) e = expf_v4(x); else e = f32x4_of(expf_v2(lo_f64(x)), expf_v2(hi_f64(x)));
      // slots outside [lo, p0] are exp(-inf) = 0
      const idx = i32x4.add(i32x4.splat(base), i32x4(0, 1, 2, 3));
      e = v128.and(e, v128.and(i32x4.ge_s(idx, i32x4.splat(lo)), i32x4.le_s(idx, i32x4.splat(p0))));
      v128.store(sc + (<usize>base << 2), e);
      if (g == 0) e0 = e; else if (g == 1) e1 = e; else if (g == 2) e2 = e; else e3 = e;
    }
    sum += <f64>reduce_add_16(e0, e1, e2, e3);
  }
  return sum;
}
// the softmax weights times 1/sum rounded to f16 (as f32), 16-slot chunks of the aligned view (the slots
// outside [lo, p0] are 0 and stay 0)
@inline function round_weights(sc: usize, lo: i32, p0: i32, inv: f32): void {
  const iv = f32x4.splat(inv);
  for (let c = lo & ~15; c <= p0; c += 16) {
    const sp = sc + (<usize>c << 2);
    v128.store(sp, round_f16x4(f32x4.mul(v128.load(sp), iv)));
    v128.store(sp, round_f16x4(f32x4.mul(v128.load(sp, 16), iv)), 16);
    v128.store(sp, round_f16x4(f32x4.mul(v128.load(sp, 32), iv)), 32);
    v128.store(sp, round_f16x4(f32x4.mul(v128.load(sp, 48), iv)), 48);
  }
}
// round_weights, then times 2^112 (exact): the weights for attn_ggml_decode's unscaled V bits
@inline function round_weights_up(sc: usize, lo: i32, p0: i32, inv: f32): void {
  const iv = f32x4.splat(inv), up = f32x4.splat(reinterpret<f32>(0x77800000));
  for (let c = lo & ~15; c <= p0; c += 16) {
    const sp = sc + (<usize>c << 2);
    v128.store(sp, f32x4.mul(round_f16x4(f32x4.mul(v128.load(sp), iv)), up));
    v128.store(sp, f32x4.mul(round_f16x4(f32x4.mul(v128.load(sp, 16), iv)), up), 16);
    v128.store(sp, f32x4.mul(round_f16x4(f32x4.mul(v128.load(sp, 32), iv)), up), 32);
    v128.store(sp, f32x4.mul(round_f16x4(f32x4.mul(v128.load(sp, 48), iv)), up), 48);
  }
}
// reduce_add_16 over the 16 lanes of 4 consecutive dims at once (lane-wise the same adds, so the same bits as
// reduce_add_16(vec_lanes(..)) per dim): lanes c, c+8, c+4, c+12 -> r_c, then (r0 + r2) + (r1 + r3), returned
@inline function reduce64_4(p: usize, stride: usize): v128 {
  const r0 = f32x4.add(f32x4.add(lane4(p, stride, 0), lane4(p, stride, 8)), f32x4.add(lane4(p, stride, 4), lane4(p, stride, 12)));
  const r1 = f32x4.add(f32x4.add(lane4(p, stride, 1), lane4(p, stride, 9)), f32x4.add(lane4(p, stride, 5), lane4(p, stride, 13)));
  const r2 = f32x4.add(f32x4.add(lane4(p, stride, 2), lane4(p, stride, 10)), f32x4.add(lane4(p, stride, 6), lane4(p, stride, 14)));
  const r3 = f32x4.add(f32x4.add(lane4(p, stride, 3), lane4(p, stride, 11)), f32x4.add(lane4(p, stride, 7), lane4(p, stride, 15)));
  return f32x4.add(f32x4.add(r0, r2), f32x4.add(r1, r3));
}
// tinyBLAS's 16-lane dot of two f32 rows (n % 16 == 0)
@inline function dot_f32_lanes16(w: usize, a: usize, n: i32): f32 {
  let l0 = f32x4.splat(0), l1 = l0, l2 = l0, l3 = l0;
  for (let i = 0; i < n; i += 16) {
    const wp = w + (<usize>i << 2), ap = a + (<usize>i << 2);
    l0 = madd(v128.load(wp), v128.load(ap), l0);
    l1 = madd(v128.load(wp, 16), v128.load(ap, 16), l1);
    l2 = madd(v128.load(wp, 32), v128.load(ap, 32), l2);
    l3 = madd(v128.load(wp, 48), v128.load(ap, 48), l3);
  }
  return reduce_add_16(l0, l1, l2, l3);
}
// For a batch, attn_ggml reads every K and V row once per query token and head: widen them once per call.
// Items = (kv head, 16-position chunk) over [0, p16): K rows -> kf[g][p][hd] f32, V -> vt[g][i][p] f32
// (transposed, so attn_ggml's V . weights runs along positions); positions > maxPos become 0.
// Arguments: the parameter block at pp (AKV_* in kernels/abi.ts).
export function attn_kv_f32(r0: i32, r1: i32, pp: usize): void {
  const k = <usize>load<i32>(pp, AKV_K), v = <usize>load<i32>(pp, AKV_V), kvs = <usize>load<i32>(pp, AKV_KV_STRIDE);
  const hd = load<i32>(pp, AKV_HEAD_DIM), maxPos = load<i32>(pp, AKV_MAX_POS);
  const kf = <usize>load<i32>(pp, AKV_KF), vt = <usize>load<i32>(pp, AKV_VT), p16 = <usize>load<i32>(pp, AKV_P16);
  const chunks = <i32>(p16 >> 4), hb = <usize>hd << 2;
  for (let r = r0; r < r1; r++) {
    const g = <usize>(r / chunks), c = <usize>(r - <i32>g * chunks) << 4;
    const kg = kf + g * p16 * hb, vg = vt + g * <usize>hd * p16 * 4;
    for (let j = c; j < c + 16; j++) {
      const kp = k + j * kvs + g * (<usize>hd << 1), vp = v + j * kvs + g * (<usize>hd << 1);
      const live = <i32>j <= maxPos;
      for (let i = 0; i < hd; i += 4) {
        const kv = live ? h2f4(v128.load16x4_u(kp + (<usize>i << 1))) : f32x4.splat(0);
        v128.store(kg + j * hb + (<usize>i << 2), kv);
        const vv = live ? h2f4(v128.load16x4_u(vp + (<usize>i << 1))) : f32x4.splat(0);
        const vo = vg + (<usize>i * p16 + j) * 4;
        store<f32>(vo, f32x4.extract_lane(vv, 0));
        store<f32>(vo + p16 * 4, f32x4.extract_lane(vv, 1));
        store<f32>(vo + p16 * 8, f32x4.extract_lane(vv, 2));
        store<f32>(vo + p16 * 12, f32x4.extract_lane(vv, 3));
      }
    }
  }
}
// the f32 at p + (l0 + 0..3) * stride as a vector
@inline function gather4(p: usize, stride: usize, l0: i32): v128 {
  const b = p + <usize>l0 * stride;
  let r = f32x4.splat(load<f32>(b));
  r = f32x4.replace_lane(r, 1, load<f32>(b + stride));
  r = f32x4.replace_lane(r, 2, load<f32>(b + 2 * stride));
  return f32x4.replace_lane(r, 3, load<f32>(b + 3 * stride));
}
// lane l of ggml_vec_dot_f16's 16 for 4 consecutive dims: (acc[l] + acc[32+l]) + (acc[16+l] + acc[48+l])
@inline function lane4(p: usize, stride: usize, l: usize): v128 {
  return f32x4.add(f32x4.add(v128.load(p + l * stride), v128.load(p + (l + 32) * stride)), f32x4.add(v128.load(p + (l + 16) * stride), v128.load(p + (l + 48) * stride)));
}
@inline function vec_lanes(p: usize, stride: usize, l0: i32): v128 {
  return f32x4.add(f32x4.add(gather4(p, stride, l0), gather4(p, stride, l0 + 32)), f32x4.add(gather4(p, stride, l0 + 16), gather4(p, stride, l0 + 48)));
}

// =============================================================================================
// Free-order matmul kernels ('fast' numerics, the cpu device's default). Same integer block sums as
// above, but the float side is plain f32 vector multiply-adds in whatever order is cheapest, and each
// pass computes several weight rows (decode) or rows x tokens (prefill) so activation and weight loads
// are shared. They agree with ggml's orders to float rounding (backend-ops test) and pass the parity
// fixtures under the same tolerances; the exact kernels above remain for numerics 'exact'.
