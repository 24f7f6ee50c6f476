// The recurrent layers' kernels (lfm2, qwen35), as the reference computes them (src/backends/reference/ops.ts,
// recurrent.ts): SiLU per ggml row (16-lane v_expf, the row's tail through glibc expf), sigmoid and softplus
// (glibc expf/logf, scalar as ggml's unary ops), and the fused Gated DeltaNet recurrence over heads.
import { silu4 } from './common/expf';
import { exp2fTab, expf_glibc, logf_glibc } from './common/glibc';
import { fma4, fmaf, reduce_add_16 } from './common/fmaf';

// y = silu(x) over rows [r0, r1) of rowLen: ggml_vec_silu_f32's AVX-512 lanes, then its scalar tail
export function silu_rows(r0: i32, r1: i32, x: usize, y: usize, rowLen: i32): void {
  const simd = rowLen & ~15;
  for (let r = r0; r < r1; r++) {
    const xp = x + (<usize>r * <usize>rowLen << 2), yp = y + (<usize>r * <usize>rowLen << 2);
    // silu4 is lane-wise: 4 values per call give each the bits silu1 gives it alone
    let i = 0;
    for (; i < simd; i += 4) v128.store(yp + (<usize>i << 2), silu4(v128.load(xp + (<usize>i << 2))));
    for (; i < rowLen; i++) {
      const v = load<f32>(xp + (<usize>i << 2));
      store<f32>(yp + (<usize>i << 2), v / (<f32>1 + expf_glibc(-v)));
    }
  }
}
// Relaxed build: glibc expf (common/glibc.ts expf_glibc, its x86-64 FMA build) with its f64 fused multiply-adds
// on f64x2.relaxed_madd instead of the emulated fma64 (the engines that fuse f32x4.relaxed_madd, which the
// relaxed build requires, emit the same FMA instruction for f64x2: x64 FMA3, arm64), two values at once, both
// with |x| < 88 (the caller sends other pairs to expf_glibc)
@inline function expf2_relaxed(a: f32, b: f32): v128 {
  const SHIFT = f64x2.splat(reinterpret<f64>(0x4338000000000000)), INVLN2N = f64x2.splat(reinterpret<f64>(0x40471547652b82fe));
  const xd = f64x2.replace_lane(f64x2.splat(<f64>a), 1, <f64>b);
  const kd = f64x2.sub(f64x2.relaxed_madd(INVLN2N, xd, SHIFT), SHIFT);
  const r = f64x2.relaxed_madd(INVLN2N, xd, f64x2.neg(kd));
  const k0 = <i64>f64x2.extract_lane(kd, 0), k1 = <i64>f64x2.extract_lane(kd, 1);
  const s = i64x2.replace_lane(i64x2.splat(<i64>(exp2fTab(<i32>(k0 & 31)) + (<u64>k0 << 47))), 1, <i64>(exp2fTab(<i32>(k1 & 31)) + (<u64>k1 << 47)));
  const z = f64x2.relaxed_madd(f64x2.splat(reinterpret<f64>(0x3ebc6af84b912394)), r, f64x2.splat(reinterpret<f64>(0x3f2ebfce50fac4f3)));
  const yy = f64x2.relaxed_madd(z, f64x2.mul(r, r), f64x2.relaxed_madd(f64x2.splat(reinterpret<f64>(0x3f962e42ff0c52d6)), r, f64x2.splat(1)));
  return f32x4.demote_f64x2_zero(f64x2.mul(yy, s));
}
// y = 1 / (1 + expf(-x))
export function sigmoid_f32(i0: i32, i1: i32, x: usize, y: usize): void {
  if (ASC_FEATURE_RELAXED_SIMD) {
    let i = i0;
    for (; i + 2 <= i1; i += 2) {
      const o = <usize>i << 2;
      const a = -load<f32>(x + o), b = -load<f32>(x + o + 4);
      if (((reinterpret<u32>(a) >> 20) & 0x7ff) >= 0x42b || ((reinterpret<u32>(b) >> 20) & 0x7ff) >= 0x42b) {
        store<f32>(y + o, <f32>1 / (<f32>1 + expf_glibc(a)));
        store<f32>(y + o + 4, <f32>1 / (<f32>1 + expf_glibc(b)));
        continue;
      }
      const r = f32x4.div(f32x4.splat(1), f32x4.add(f32x4.splat(1), expf2_relaxed(a, b)));
      store<f32>(y + o, f32x4.extract_lane(r, 0));
      store<f32>(y + o + 4, f32x4.extract_lane(r, 1));
    }
    if (i < i1) { const o = <usize>i << 2; store<f32>(y + o, <f32>1 / (<f32>1 + expf_glibc(-load<f32>(x + o)))); }
    return;
  }
  for (let i = i0; i < i1; i++) {
    const o = <usize>i << 2;
    store<f32>(y + o, <f32>1 / (<f32>1 + expf_glibc(-load<f32>(x + o))));
  }
}
// y = x > 20 ? x : logf(1 + expf(x))
export function softplus_f32(i0: i32, i1: i32, x: usize, y: usize): void {
  for (let i = i0; i < i1; i++) {
    const o = <usize>i << 2;
    const v = load<f32>(x + o);
    store<f32>(y + o, v > <f32>20 ? v : logf_glibc(<f32>1 + expf_glibc(v)));
  }
}

// ggml_vec_dot_f32 (AVX-512) of n values: lane l of 64 accumulates elements l, l+64, ... by FMA; lanes
// (l, l+32) and (l+16, l+48) added, then _mm512_reduce_add_ps; the n % 64 tail added unfused in f32
@inline function lane4(x: usize, y: usize, np: i32, l: i32): f32 {
  // lanes l, l+16, l+32, l+48 -> (a0 + a2) + (a1 + a3)
  let a0: f32 = 0, a1: f32 = 0, a2: f32 = 0, a3: f32 = 0;
  for (let s = 0; s < np; s += 64) {
    const o = <usize>(s + l) << 2;
    a0 = fmaf(load<f32>(x + o), load<f32>(y + o), a0);
    a1 = fmaf(load<f32>(x + o + 64), load<f32>(y + o + 64), a1);
    a2 = fmaf(load<f32>(x + o + 128), load<f32>(y + o + 128), a2);
    a3 = fmaf(load<f32>(x + o + 192), load<f32>(y + o + 192), a3);
  }
  return (a0 + a2) + (a1 + a3);
}
// relaxed build: the 64 lanes as 16 f32x4 chains on relaxed_madd (checked fused at start-up); lane vector
// q of the 16 combined lanes = (A[q] + A[q+8]) + (A[q+4] + A[q+12]), as lane4
@inline function lanes16_relaxed(x: usize, y: usize, np: i32, q: usize): v128 {
  let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0;
  for (let s = 0; s < np; s += 64) {
    const o = (<usize>s << 2) + (q << 4);
    a0 = fma4(v128.load(x + o), v128.load(y + o), a0);
    a1 = fma4(v128.load(x + o + 64), v128.load(y + o + 64), a1);
    a2 = fma4(v128.load(x + o + 128), v128.load(y + o + 128), a2);
    a3 = fma4(v128.load(x + o + 192), v128.load(y + o + 192), a3);
  }
  return f32x4.add(f32x4.add(a0, a2), f32x4.add(a1, a3));
}
function dot_f32_ggml(x: usize, y: usize, n: i32): f32 {
  const np = n & ~63;
  let s: f32 = 0;
  if (ASC_FEATURE_RELAXED_SIMD) {
    if (np > 0) s = reduce_add_16(lanes16_relaxed(x, y, np, 0), lanes16_relaxed(x, y, np, 1), lanes16_relaxed(x, y, np, 2), lanes16_relaxed(x, y, np, 3));
  } else if (np > 0) {
    let l0 = f32x4.splat(0), l1 = f32x4.splat(0), l2 = f32x4.splat(0), l3 = f32x4.splat(0);
    l0 = f32x4.replace_lane(l0, 0, lane4(x, y, np, 0)); l0 = f32x4.replace_lane(l0, 1, lane4(x, y, np, 1));
    l0 = f32x4.replace_lane(l0, 2, lane4(x, y, np, 2)); l0 = f32x4.replace_lane(l0, 3, lane4(x, y, np, 3));
    l1 = f32x4.replace_lane(l1, 0, lane4(x, y, np, 4)); l1 = f32x4.replace_lane(l1, 1, lane4(x, y, np, 5));
    l1 = f32x4.replace_lane(l1, 2, lane4(x, y, np, 6)); l1 = f32x4.replace_lane(l1, 3, lane4(x, y, np, 7));
    l2 = f32x4.replace_lane(l2, 0, lane4(x, y, np, 8)); l2 = f32x4.replace_lane(l2, 1, lane4(x, y, np, 9));
    l2 = f32x4.replace_lane(l2, 2, lane4(x, y, np, 10)); l2 = f32x4.replace_lane(l2, 3, lane4(x, y, np, 11));
    l3 = f32x4.replace_lane(l3, 0, lane4(x, y, np, 12)); l3 = f32x4.replace_lane(l3, 1, lane4(x, y, np, 13));
    l3 = f32x4.replace_lane(l3, 2, lane4(x, y, np, 14)); l3 = f32x4.replace_lane(l3, 3, lane4(x, y, np, 15));
    s = reduce_add_16(l0, l1, l2, l3);
  }
  for (let i = np; i < n; i++) { const o = <usize>i << 2; s += load<f32>(x + o) * load<f32>(y + o); }
  return s;
}

// relaxed build: fused row passes of the gated delta rule, lane vector q of dot_f32_ggml's 16 (see
// lanes16_relaxed) over a row's first np values. decay_dot_relaxed: m * decay, accumulating (m * decay)·k;
// update_dot_relaxed: m = k * d + m * decay (stored), accumulating m·q. Each value takes the operations the
// separate passes (scale, dot, rank-1 FMA, dot) give it, in the same order (m * decay is computed twice, the
// same product, rather than stored and reloaded)
@inline function decay_dot_relaxed(m: usize, k: usize, np: i32, q: usize, dv: v128): v128 {
  let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0;
  for (let s = 0; s < np; s += 64) {
    const o = (<usize>s << 2) + (q << 4);
    a0 = fma4(f32x4.mul(v128.load(m + o), dv), v128.load(k + o), a0);
    a1 = fma4(f32x4.mul(v128.load(m + o + 64), dv), v128.load(k + o + 64), a1);
    a2 = fma4(f32x4.mul(v128.load(m + o + 128), dv), v128.load(k + o + 128), a2);
    a3 = fma4(f32x4.mul(v128.load(m + o + 192), dv), v128.load(k + o + 192), a3);
  }
  return f32x4.add(f32x4.add(a0, a2), f32x4.add(a1, a3));
}
@inline function update_dot_relaxed(m: usize, k: usize, qv: usize, np: i32, q: usize, dv: v128, dd: v128): v128 {
  let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0;
  for (let s = 0; s < np; s += 64) {
    const o = (<usize>s << 2) + (q << 4);
    const x0 = fma4(v128.load(k + o), dd, f32x4.mul(v128.load(m + o), dv));
    const x1 = fma4(v128.load(k + o + 64), dd, f32x4.mul(v128.load(m + o + 64), dv));
    const x2 = fma4(v128.load(k + o + 128), dd, f32x4.mul(v128.load(m + o + 128), dv));
    const x3 = fma4(v128.load(k + o + 192), dd, f32x4.mul(v128.load(m + o + 192), dv));
    v128.store(m + o, x0); v128.store(m + o + 64, x1); v128.store(m + o + 128, x2); v128.store(m + o + 192, x3);
    a0 = fma4(x0, v128.load(qv + o), a0);
    a1 = fma4(x1, v128.load(qv + o + 64), a1);
    a2 = fma4(x2, v128.load(qv + o + 128), a2);
    a3 = fma4(x3, v128.load(qv + o + 192), a3);
  }
  return f32x4.add(f32x4.add(a0, a2), f32x4.add(a1, a3));
}
// M[j] *= decay, then M[j]·k: the np values' lanes (not stored yet), then the tail's values scaled, stored and
// added unfused (dot_f32_ggml's tail)
@inline function gdn_kdot(mr: usize, ko: usize, np: i32, S: i32, dv: v128, decay: f32): f32 {
  let s: f32 = 0;
  if (np > 0) s = reduce_add_16(decay_dot_relaxed(mr, ko, np, 0, dv), decay_dot_relaxed(mr, ko, np, 1, dv), decay_dot_relaxed(mr, ko, np, 2, dv), decay_dot_relaxed(mr, ko, np, 3, dv));
  for (let i = np; i < S; i++) {
    const oi = <usize>i << 2, x = load<f32>(mr + oi) * decay;
    store<f32>(mr + oi, x);
    s += x * load<f32>(ko + oi);
  }
  return s;
}
// M[j] = k * d + M[j] (the np values scaled by decay here, the tail's already), then M[j]·q
@inline function gdn_qdot(mr: usize, ko: usize, qo: usize, np: i32, S: i32, dv: v128, d: f32): f32 {
  const dd = f32x4.splat(d);
  let u: f32 = 0;
  if (np > 0) u = reduce_add_16(update_dot_relaxed(mr, ko, qo, np, 0, dv, dd), update_dot_relaxed(mr, ko, qo, np, 1, dv, dd), update_dot_relaxed(mr, ko, qo, np, 2, dv, dd), update_dot_relaxed(mr, ko, qo, np, 3, dv, dd));
  for (let i = np; i < S; i++) {
    const oi = <usize>i << 2, x = fmaf(load<f32>(ko + oi), d, load<f32>(mr + oi));
    store<f32>(mr + oi, x);
    u += x * load<f32>(qo + oi);
  }
  return u;
}
// rows per block of the relaxed gated delta rule: a block's state (GDN_ROWS x S values) stays in L1 while the
// block runs every token of the batch
const GDN_ROWS = 16;
// Relaxed build: the rows of a head are independent (row j of the state sees only k, q, v[j], g and beta of
// each token), so each block of GDN_ROWS rows runs all the batch's tokens, and per token each row is one
// pass (decay and k-dot) and a second (decay, rank-1 update and q-dot) over its values, in L1; two rows at a
// time, so one row's reductions overlap the other's passes. Every value takes gated_delta_net's operations in
// the same order: the same bits.
function gated_delta_net_relaxed(h0: i32, h1: i32, state: usize, q: usize, k: usize, v: usize, g: usize, beta: usize, y: usize,
  nTok: i32, S: i32, hk: i32, hv: i32): void {
  const scale: f32 = <f32>1 / Mathf.sqrt(<f32>S);
  const row = <usize>S << 2;
  const np = S & ~63;
  for (let h = h0; h < h1; h++) {
    const mh = state + <usize>h * <usize>S * row;
    for (let j0 = 0; j0 < S; j0 += GDN_ROWS) {
      const j1 = min(j0 + GDN_ROWS, S);
      for (let t = 0; t < nTok; t++) {
        const qo = q + ((<usize>t * <usize>hk + <usize>(h % hk)) * row), ko = k + ((<usize>t * <usize>hk + <usize>(h % hk)) * row);
        const vo = v + ((<usize>t * <usize>hv + <usize>h) * row), yo = y + ((<usize>t * <usize>hv + <usize>h) * row);
        const gi = (<usize>t * <usize>hv + <usize>h) << 2;
        const decay = expf_glibc(load<f32>(g + gi)), b = load<f32>(beta + gi);
        const dv = f32x4.splat(decay);
        let j = j0;
        for (; j + 2 <= j1; j += 2) {
          const m0 = mh + <usize>j * row, m1 = m0 + row, o = <usize>j << 2;
          const s0 = gdn_kdot(m0, ko, np, S, dv, decay), s1 = gdn_kdot(m1, ko, np, S, dv, decay);
          const d0 = (load<f32>(vo + o) - s0) * b, d1 = (load<f32>(vo + o + 4) - s1) * b;
          const u0 = gdn_qdot(m0, ko, qo, np, S, dv, d0), u1 = gdn_qdot(m1, ko, qo, np, S, dv, d1);
          store<f32>(yo + o, u0 * scale);
          store<f32>(yo + o + 4, u1 * scale);
        }
        for (; j < j1; j++) {
          const m0 = mh + <usize>j * row, o = <usize>j << 2;
          const d0 = (load<f32>(vo + o) - gdn_kdot(m0, ko, np, S, dv, decay)) * b;
          store<f32>(yo + o, gdn_qdot(m0, ko, qo, np, S, dv, d0) * scale);
        }
      }
    }
  }
}

// The gated delta rule for v-heads [h0, h1), one token at a time (ggml_compute_forward_gated_delta_net_one_chunk):
// per head its S x S state M (transposed: M[j][i] = S[i][j]) decays by expf(g), delta = (v - M·k) * beta,
// M[j] += k * delta[j] (FMA), out = (M·q) / sqrt(S). v-head h reads q/k head h % hk. delta is kept in the
// head's output slot until the output overwrites it (the arena never gives y the bytes of a live source).
export function gated_delta_net(h0: i32, h1: i32, state: usize, q: usize, k: usize, v: usize, g: usize, beta: usize, y: usize,
  nTok: i32, S: i32, hk: i32, hv: i32): void {
  if (ASC_FEATURE_RELAXED_SIMD) { gated_delta_net_relaxed(h0, h1, state, q, k, v, g, beta, y, nTok, S, hk, hv); return; }
  const scale: f32 = <f32>1 / Mathf.sqrt(<f32>S);
  const row = <usize>S << 2;
  for (let h = h0; h < h1; h++) {
    const m = state + <usize>h * <usize>S * row;
    for (let t = 0; t < nTok; t++) {
      const qo = q + ((<usize>t * <usize>hk + <usize>(h % hk)) * row), ko = k + ((<usize>t * <usize>hk + <usize>(h % hk)) * row);
      const vo = v + ((<usize>t * <usize>hv + <usize>h) * row), yo = y + ((<usize>t * <usize>hv + <usize>h) * row);
      const gi = (<usize>t * <usize>hv + <usize>h) << 2;
      const decay = expf_glibc(load<f32>(g + gi)), b = load<f32>(beta + gi);
      const dv = f32x4.splat(decay);
      const n2 = S * S;
      let i = 0;
      for (; i + 4 <= n2; i += 4) { const o = m + (<usize>i << 2); v128.store(o, f32x4.mul(v128.load(o), dv)); }
      for (; i < n2; i++) { const o = m + (<usize>i << 2); store<f32>(o, load<f32>(o) * decay); }
      for (let j = 0; j < S; j++) {
        const o = <usize>j << 2;
        store<f32>(yo + o, (load<f32>(vo + o) - dot_f32_ggml(m + <usize>j * row, ko, S)) * b);
      }
      for (let j = 0; j < S; j++) {
        const d = load<f32>(yo + (<usize>j << 2)), mr = m + <usize>j * row;
        let c = 0;
        if (ASC_FEATURE_RELAXED_SIMD) {
          const dd = f32x4.splat(d);
          for (; c + 4 <= S; c += 4) { const o = <usize>c << 2; v128.store(mr + o, fma4(v128.load(ko + o), dd, v128.load(mr + o))); }
        }
        for (; c < S; c++) { const o = <usize>c << 2; store<f32>(mr + o, fmaf(load<f32>(ko + o), d, load<f32>(mr + o))); }
      }
      for (let j = 0; j < S; j++) store<f32>(yo + (<usize>j << 2), dot_f32_ggml(m + <usize>j * row, qo, S) * scale);
    }
  }
}

// ggml_compute_forward_ssm_conv_f32 over channels [c0, c1): y[t][c] = the FMA chain over the taps k = 0 ..
// kernel-1 (oldest first) of w[c][k] * in[c][t - kernel + 1 + k], from 0; the window is the channel's
// kernel-1 state values (state[c][kernel-1], oldest first), then x [channels, nTok]. Then each channel's state
// becomes its last kernel-1 inputs. As the reference ssmConv (src/backends/reference/recurrent.ts), bit for bit:
// the relaxed build runs 4 channels per f32x4, each output's chain in tap order, the SIMD128 build the scalar
// chain. y must not overlap the state, x or w (the arena never gives a result the bytes of a live source).
// The relaxed build takes the batch in tiles of 4 tokens (a tile's kernel + 3 input rows and 4 output rows
// at one column: rows channels*4 bytes apart share a cache set when that is a multiple of 4 KiB, qwen35's
// 6144 channels, so fewer of them at a time stay in L1); the first tile (window columns in the state) and
// the last partial one token by token.
@inline function conv_w4(wo: usize, wstep: usize): v128 {
  let wk = f32x4.splat(load<f32>(wo));
  wk = f32x4.replace_lane(wk, 1, load<f32>(wo + wstep));
  wk = f32x4.replace_lane(wk, 2, load<f32>(wo + 2 * wstep));
  return f32x4.replace_lane(wk, 3, load<f32>(wo + 3 * wstep));
}
// one output vector (4 channels from c) of token t, window columns from the state where t + k < h
@inline function conv_token4(t: i32, k0: i32, kernel: i32, h: i32, sc: usize, sstep: usize, wc: usize, wstep: usize, xc: usize, xrow: usize): v128 {
  let acc = f32x4.splat(0);
  for (let k = k0; k < kernel; k++) {
    const j = t + k;
    let xin: v128;
    if (j < h) {
      const so = sc + (<usize>j << 2);
      xin = f32x4.splat(load<f32>(so));
      xin = f32x4.replace_lane(xin, 1, load<f32>(so + sstep));
      xin = f32x4.replace_lane(xin, 2, load<f32>(so + 2 * sstep));
      xin = f32x4.replace_lane(xin, 3, load<f32>(so + 3 * sstep));
    } else xin = v128.load(xc + <usize>(j - h) * xrow);
    acc = fma4(xin, conv_w4(wc + (<usize>k << 2), wstep), acc);
  }
  return acc;
}
export function ssm_conv_f32(c0: i32, c1: i32, state: usize, x: usize, w: usize, y: usize, nTok: i32, ch: i32, kernel: i32): void {
  const h = kernel - 1, xrow = <usize>ch << 2;
  let cEnd = c0;
  if (ASC_FEATURE_RELAXED_SIMD) {
    const wstep = <usize>kernel << 2, sstep = <usize>h << 2;
    cEnd = c0 + ((c1 - c0) & ~3);
    // one token through a 4-tap kernel (decode): 4 channels' states (3 vectors) and weights (4) loaded whole and
    // transposed in registers instead of gathered lane by lane; the same chain per output and the same new state
    if (nTok == 1 && kernel == 4) {
      for (let c = c0; c < cEnd; c += 4) {
        const sc = state + (<usize>c * 12), wc = w + (<usize>c << 4);
        const S0 = v128.load(sc), S1 = v128.load(sc, 16), S2 = v128.load(sc, 32), xv = v128.load(x + (<usize>c << 2));
        const W0 = v128.load(wc), W1 = v128.load(wc, 16), W2 = v128.load(wc, 32), W3 = v128.load(wc, 48);
        const s0 = i32x4.shuffle(i32x4.shuffle(S0, S1, 0, 3, 6, 6), S2, 0, 1, 2, 5);
        const s1 = i32x4.shuffle(i32x4.shuffle(S0, S1, 1, 4, 7, 7), S2, 0, 1, 2, 6);
        const s2 = i32x4.shuffle(i32x4.shuffle(S0, S1, 2, 5, 5, 5), S2, 0, 1, 4, 7);
        const ta = i32x4.shuffle(W0, W1, 0, 4, 1, 5), tb = i32x4.shuffle(W2, W3, 0, 4, 1, 5);
        const tc = i32x4.shuffle(W0, W1, 2, 6, 3, 7), td = i32x4.shuffle(W2, W3, 2, 6, 3, 7);
        let acc = fma4(s0, i32x4.shuffle(ta, tb, 0, 1, 4, 5), f32x4.splat(0));
        acc = fma4(s1, i32x4.shuffle(ta, tb, 2, 3, 6, 7), acc);
        acc = fma4(s2, i32x4.shuffle(tc, td, 0, 1, 4, 5), acc);
        acc = fma4(xv, i32x4.shuffle(tc, td, 2, 3, 6, 7), acc);
        v128.store(y + (<usize>c << 2), acc);
        // the new windows: [s1 s2 x] per channel
        v128.store(sc, i32x4.shuffle(i32x4.shuffle(S0, xv, 1, 2, 4, 4), S1, 0, 1, 2, 4));
        v128.store(sc, i32x4.shuffle(i32x4.shuffle(S1, xv, 1, 5, 3, 3), S2, 0, 1, 2, 4), 16);
        v128.store(sc, i32x4.shuffle(S2, xv, 6, 2, 3, 7), 32);
      }
      for (let c = cEnd; c < c1; c++) {
        const sc = state + (<usize>c * 12), wc = w + (<usize>c << 4);
        const s0 = load<f32>(sc), s1 = load<f32>(sc, 4), s2 = load<f32>(sc, 8), xi = load<f32>(x + (<usize>c << 2));
        store<f32>(y + (<usize>c << 2), fmaf(xi, load<f32>(wc, 12), fmaf(s2, load<f32>(wc, 8), fmaf(s1, load<f32>(wc, 4), fmaf(s0, load<f32>(wc), 0)))));
        store<f32>(sc, s1); store<f32>(sc, s2, 4); store<f32>(sc, xi, 8);
      }
      return;
    }
    // tokens [0, tA): the state's columns in their windows; [tA, tB): whole tiles of 4 inside the batch
    const tA = min(h, nTok), tB = tA + ((nTok - tA) & ~3);
    for (let c = c0; c < cEnd; c += 4) {
      const wc = w + (<usize>c * <usize>kernel << 2), sc = state + (<usize>c * <usize>h << 2), yc = y + (<usize>c << 2), xc = x + (<usize>c << 2);
      for (let t = 0; t < tA; t++) v128.store(yc + <usize>t * xrow, conv_token4(t, 0, kernel, h, sc, sstep, wc, wstep, xc, xrow));
      for (let t = tB; t < nTok; t++) v128.store(yc + <usize>t * xrow, conv_token4(t, 0, kernel, h, sc, sstep, wc, wstep, xc, xrow));
    }
    for (let t0 = tA; t0 < tB; t0 += 4) {
      for (let c = c0; c < cEnd; c += 4) {
        const wc = w + (<usize>c * <usize>kernel << 2), yo = y + (<usize>c << 2) + <usize>t0 * xrow;
        const xo = x + (<usize>c << 2) + <usize>(t0 - h) * xrow; // window column t0 (tap 0 of token t0)
        let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0;
        for (let k = 0; k < kernel; k++) {
          const wk = conv_w4(wc + (<usize>k << 2), wstep), xk = xo + <usize>k * xrow;
          a0 = fma4(v128.load(xk), wk, a0);
          a1 = fma4(v128.load(xk + xrow), wk, a1);
          a2 = fma4(v128.load(xk + 2 * xrow), wk, a2);
          a3 = fma4(v128.load(xk + 3 * xrow), wk, a3);
        }
        v128.store(yo, a0); v128.store(yo + xrow, a1); v128.store(yo + 2 * xrow, a2); v128.store(yo + 3 * xrow, a3);
      }
    }
  }
  for (let c = cEnd; c < c1; c++) {
    const wc = w + (<usize>c * <usize>kernel << 2), sc = state + (<usize>c * <usize>h << 2);
    for (let t = 0; t < nTok; t++) {
      let s: f32 = 0;
      for (let k = 0; k < kernel; k++) {
        const j = t + k;
        let xin: f32;
        if (j < h) xin = load<f32>(sc + (<usize>j << 2));
        else xin = load<f32>(x + <usize>(j - h) * xrow + (<usize>c << 2));
        s = fmaf(xin, load<f32>(wc + (<usize>k << 2)), s);
      }
      store<f32>(y + <usize>t * xrow + (<usize>c << 2), s);
    }
  }
  // the new state: window columns nTok .. nTok + h - 1 (each read before it is overwritten: in place)
  for (let cc = c0; cc < c1; cc++) {
    const sc = state + (<usize>cc * <usize>h << 2);
    for (let j = 0; j < h; j++) {
      const jw = nTok + j;
      if (jw < h) store<f32>(sc + (<usize>j << 2), load<f32>(sc + (<usize>jw << 2)));
      else store<f32>(sc + (<usize>j << 2), load<f32>(x + <usize>(jw - h) * xrow + (<usize>cc << 2)));
    }
  }
}

// ggml_compute_forward_l2_norm_f32 over rows [r0, r1) of rowLen: the f32 squares summed in double in order,
// scale = 1 / max(sqrtf(sum), eps), y = x * scale (as ref.l2Norm). Four rows' sums run side by side (four
// independent chains, each in its row's order); every row is read whole before it is written.
@inline function l2_scale_row(xp: usize, yp: usize, rowLen: i32, sum: f64, eps: f32): void {
  const sc: f32 = <f32>1 / max(Mathf.sqrt(<f32>sum), eps);
  const sv = f32x4.splat(sc);
  let i = 0;
  for (; i + 4 <= rowLen; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.mul(v128.load(xp + o), sv)); }
  for (; i < rowLen; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(xp + o) * sc); }
}
export function l2_norm_rows(r0: i32, r1: i32, x: usize, y: usize, rowLen: i32, eps: f32): void {
  const row = <usize>rowLen << 2;
  let r = r0;
  for (; r + 4 <= r1; r += 4) {
    const x0 = x + <usize>r * row, y0 = y + <usize>r * row;
    let s0: f64 = 0, s1: f64 = 0, s2: f64 = 0, s3: f64 = 0;
    for (let i = 0; i < rowLen; i++) {
      const o = x0 + (<usize>i << 2);
      const v0 = load<f32>(o), v1 = load<f32>(o + row), v2 = load<f32>(o + 2 * row), v3 = load<f32>(o + 3 * row);
      s0 += <f64>(v0 * v0); s1 += <f64>(v1 * v1); s2 += <f64>(v2 * v2); s3 += <f64>(v3 * v3);
    }
    l2_scale_row(x0, y0, rowLen, s0, eps);
    l2_scale_row(x0 + row, y0 + row, rowLen, s1, eps);
    l2_scale_row(x0 + 2 * row, y0 + 2 * row, rowLen, s2, eps);
    l2_scale_row(x0 + 3 * row, y0 + 3 * row, rowLen, s3, eps);
  }
  for (; r < r1; r++) {
    const x0 = x + <usize>r * row, y0 = y + <usize>r * row;
    let s: f64 = 0;
    for (let i = 0; i < rowLen; i++) { const v = load<f32>(x0 + (<usize>i << 2)); s += <f64>(v * v); }
    l2_scale_row(x0, y0, rowLen, s, eps);
  }
}
