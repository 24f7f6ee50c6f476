// WGSL sources of the webgpu device's kernels, one generator per family, keyed by variant (device.ts caches
// one pipeline per key). Conventions:
// - binding 0 is the kernel's parameter block (uniform); then the tensors in the order the generator lists;
//   every storage binding is read_write (one arena buffer is bound several times per dispatch: WebGPU allows
//   several writable bindings of a buffer in one dispatch, not read-only next to writable).
// - weights are raw GGUF blocks bound as array<u32> (unaligned 18/34/210-byte blocks read byte-wise through
//   word loads); f16 values (weights, an f16 KV cache) are unpacked with unpack2x16float, so no kernel needs
//   shader-f16; f32 -> f16 rounding is done in integers (round to nearest even, as ggml's f32 -> f16).
// - the workgroup index is wid.y * num_workgroups.x + wid.x (grids wider than 65535 workgroups wrap into y);
//   kernels return early past their last workgroup (uniform: derived from the workgroup id).
// - the quantized matmuls (shaders-mmq.ts) and the attention reproduce ggml's float order; the f32/F16 matmul
//   does not (the conformance suite holds it to llama.cpp's NMSE limits). fma( is made fmaX (fma.ts) by device.ts.
import { GgmlType } from '../../gguf/ggml-types.js';

export const WG = 64;
/** largest attention head (K and V) the kernel keeps in workgroup memory / registers */
export const ATTN_MAX_HEAD = 256;

const COMMON = /* wgsl */ `
fn f16bits(f: f32) -> u32 {
  let x = bitcast<u32>(f);
  let sign = (x >> 16u) & 0x8000u;
  let e = i32((x >> 23u) & 0xffu);
  let m = x & 0x7fffffu;
  if (e == 255) { return sign | 0x7c00u | select(0u, 0x200u | (m >> 13u), m != 0u); }
  let he = e - 112;
  if (he >= 31) { return sign | 0x7c00u; }
  if (he <= 0) {
    if (he < -10) { return sign; }
    let mm = m | 0x800000u;
    let sh = u32(14 - he);
    var q = mm >> sh;
    let rem = mm & ((1u << sh) - 1u);
    let half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u) == 1u)) { q = q + 1u; }
    return sign | q;
  }
  var q = (u32(he) << 10u) | (m >> 13u);
  let rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u) == 1u)) { q = q + 1u; }
  return sign | q;
}
fn f16r(x: f32) -> f32 { return unpack2x16float(f16bits(x)).x; }
fn tanh_(x: f32) -> f32 {
  let a = abs(x);
  var r: f32;
  if (a < 0.3) {
    let x2 = a * a;
    r = a * (1.0 + x2 * (-0.33333334 + x2 * (0.13333334 + x2 * (-0.053968254 + x2 * (0.021869488 + x2 * -0.008863236)))));
  } else if (a > 10.0) {
    r = 1.0;
  } else {
    let t = exp(-2.0 * a);
    r = (1.0 - t) / (1.0 + t);
  }
  return select(r, -r, x < 0.0);
}
`;

const IDX = /* wgsl */ `@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_index) lid: u32`;
const GROUP = /* wgsl */ `let grp = wid.y * nw.x + wid.x;`;

/** byte/half reads over the weight binding W (array<u32>) */
const WREAD = /* wgsl */ `
fn rdb(a: u32) -> u32 { return (W[a >> 2u] >> ((a & 3u) * 8u)) & 0xffu; }
fn rdh(a: u32) -> f32 { return unpack2x16float((W[a >> 2u] >> ((a & 2u) * 8u)) & 0xffffu).x; }
fn sx8(b: u32) -> f32 { return f32(bitcast<i32>(b << 24u) >> 24u); }
`;

/**
 * Per type: hdr(base, sb) decodes what sub-block sb (32 values) of the row at byte `base` shares (scales,
 * addresses), val(h, j) its value j. No private arrays: llvmpipe compiles those into code that takes seconds.
 */
function deqBlock(type: number): string {
  const H = 'struct H { a: u32, b: u32, c: u32, s0: u32, s1: u32, d: f32, m: f32 }';
  switch (type) {
    case GgmlType.F32: return `${H}
fn hdr(base: u32, sb: u32) -> H { return H((base >> 2u) + sb * 32u, 0u, 0u, 0u, 0u, 0.0, 0.0); }
fn val(h: H, j: u32) -> f32 { return bitcast<f32>(W[h.a + j]); }`;
    case GgmlType.F16: return `${H}
fn hdr(base: u32, sb: u32) -> H { return H(base + sb * 64u, 0u, 0u, 0u, 0u, 0.0, 0.0); }
fn val(h: H, j: u32) -> f32 { return rdh(h.a + 2u * j); }`;
    case GgmlType.Q8_0: return `${H}
fn hdr(base: u32, sb: u32) -> H { let a = base + sb * 34u; return H(a + 2u, 0u, 0u, 0u, 0u, rdh(a), 0.0); }
fn val(h: H, j: u32) -> f32 { return h.d * sx8(rdb(h.a + j)); }`;
    case GgmlType.Q4_0: return `${H}
fn hdr(base: u32, sb: u32) -> H { let a = base + sb * 18u; return H(a + 2u, 0u, 0u, 0u, 0u, rdh(a), 0.0); }
fn val(h: H, j: u32) -> f32 { let b = rdb(h.a + (j & 15u)); return h.d * (f32(select(b & 15u, b >> 4u, j >= 16u)) - 8.0); }`;
    case GgmlType.Q4_K: return `${H}
fn hdr(base: u32, sb: u32) -> H {
  let a = base + (sb >> 3u) * 144u; let s = sb & 7u;
  let d = rdh(a); let dmin = rdh(a + 2u);
  var sc: u32; var m: u32;
  if (s < 4u) { sc = rdb(a + 4u + s) & 63u; m = rdb(a + 8u + s) & 63u; }
  else { sc = (rdb(a + 8u + s) & 15u) | ((rdb(a + s) >> 6u) << 4u); m = (rdb(a + 8u + s) >> 4u) | ((rdb(a + 4u + s) >> 6u) << 4u); }
  return H(a + 16u + 32u * (s >> 1u), 0u, 0u, (s & 1u) * 4u, 0u, d * f32(sc), dmin * f32(m));
}
fn val(h: H, j: u32) -> f32 { return h.d * f32((rdb(h.a + j) >> h.s0) & 15u) - h.m; }`;
    case GgmlType.Q6_K: return `${H}
fn hdr(base: u32, sb: u32) -> H {
  let a = base + (sb >> 3u) * 210u; let s = sb & 7u;
  let hf = s >> 2u; let qt = s & 3u;
  return H(a + 64u * hf + (qt & 1u) * 32u, a + 128u + 32u * hf, a + 192u + 8u * hf + 2u * qt, (qt >> 1u) * 4u, 2u * qt, rdh(a + 208u), 0.0);
}
fn val(h: H, j: u32) -> f32 {
  let q = ((rdb(h.a + j) >> h.s0) & 15u) | (((rdb(h.b + j) >> h.s1) & 3u) << 4u);
  return h.d * sx8(rdb(h.c + (j >> 4u))) * (f32(q) - 32.0);
}`;
  }
  throw new Error(`webgpu: no WGSL dequantizer for ggml type ${type}`);
}
export const WEIGHT_TYPES: readonly number[] = [GgmlType.F32, GgmlType.F16, GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q6_K];

/** y[i] = row ids[i] of W (rows [r0, r0 + N) of the table in this binding): a thread per 32-value sub-block */
export function getRowsShader(type: number): string {
  return `${COMMON}
struct P { K: u32, nIds: u32, rowBytes: u32, r0: u32, N: u32, nsb: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> W: array<u32>;
@group(0) @binding(2) var<storage, read_write> IDS: array<i32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;
${WREAD}
${deqBlock(type)}
@compute @workgroup_size(${WG})
fn main(${IDX}) {
  ${GROUP}
  let i = grp * ${WG}u + lid;
  if (i >= p.nIds * p.nsb) { return; }
  let t = i / p.nsb; let sb = i % p.nsb;
  let id = u32(IDS[t]);
  if (id < p.r0 || id >= p.r0 + p.N) { return; }
  let nj = min(32u, p.K - sb * 32u);
  let hd = hdr((id - p.r0) * p.rowBytes, sb);
  for (var j = 0u; j < nj; j++) { Y[t * p.K + sb * 32u + j] = val(hd, j); }
}`;
}

export type EwOp = 'add' | 'mul' | 'scale' | 'softcap' | 'swiglu' | 'geglu' | 'view_cols' | 'view_blocks' | 'silu' | 'sigmoid' | 'scale_rows';
const EW_BODY: Record<EwOp, string> = {
  add: 'Y[i] = A[i] + B[i % p.nb];',
  mul: 'Y[i] = A[i] * B[i % p.nb];',
  scale: 'Y[i] = A[i] * p.s0;',
  softcap: 'Y[i] = tanh_(A[i] * p.s0) * p.s1;',
  // ggml_v_silu: x / (1 + ggml_v_expf(-x)), the division rounded once
  swiglu: 'let x = A[i]; Y[i] = cdiv(x, 1.0 + expv(-x)) * B[i];',
  silu: 'let x = A[i]; Y[i] = cdiv(x, 1.0 + expv(-x));',
  sigmoid: 'Y[i] = 1.0 / (1.0 + exp(-A[i]));',
  scale_rows: 'Y[i] = A[i] * B[i / p.w];',
  // ggml's GELU: input and result rounded to f16 (its table), tanh form; identity past +-10
  geglu: `let x = A[i]; var g: f32;
  if (x <= -10.0) { g = 0.0; } else if (x >= 10.0) { g = x; } else {
    let h = f16r(x);
    let inner = (0.7978846 * h) * fma(0.044715 * h, h, 1.0);
    g = f16r((0.5 * h) * (1.0 + tanh_(inner)));
  }
  Y[i] = g * B[i];`,
  view_cols: 'let r = i / p.w; Y[i] = A[r * p.srcw + p.off + i % p.w];',
  view_blocks: 'let r = i / p.w; let c = i % p.w; Y[i] = A[r * p.srcw + p.off + (c / p.blk) * p.stride + c % p.blk];',
};
export const ewHasB = (op: EwOp) => op === 'add' || op === 'mul' || op === 'swiglu' || op === 'geglu' || op === 'scale_rows';

export function elementwiseShader(op: EwOp): string {
  return `${COMMON}${EXPV}
struct P { n: u32, nb: u32, s0: f32, s1: f32, w: u32, srcw: u32, off: u32, blk: u32, stride: u32, never: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> A: array<f32>;
${ewHasB(op) ? '@group(0) @binding(2) var<storage, read_write> B: array<f32>;\n@group(0) @binding(3) var<storage, read_write> Y: array<f32>;' : '@group(0) @binding(2) var<storage, read_write> Y: array<f32>;'}
@compute @workgroup_size(${WG})
fn main(${IDX}) {
  ${GROUP}
  let i = grp * ${WG}u + lid;
  if (i >= p.n) { return; }
  ${EW_BODY[op]}
}`;
}

/**
 * rms_norm (or l2_norm) over chunks of `len`: a workgroup per chunk. As ggml: the f32 squares summed in double
 * (float-float here), then mean, sqrt and 1/x each rounded once to f32 (the quotient and the root corrected by
 * one residual step: WGSL's division and sqrt need not be correctly rounded).
 */
export function normShader(kind: 'rms' | 'l2'): string {
  // rms: mean + eps with eps a double in ggml (eps = p.eps + p.epsLo), rounded once
  const scale = kind === 'rms' ? `var mh = cdiv(sum, f32(p.len)); var ml = 0.0; ffadd(&mh, &ml, p.eps); ml += p.epsLo;
  let scale = cdiv(1.0, csqrt(mh + ml));` : 'let scale = cdiv(1.0, max(csqrt(sum), p.eps));';
  return `${COMMON}
struct P { len: u32, nrows: u32, eps: f32, epsLo: f32, never: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> A: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
${OPQ}
fn cdiv(a: f32, b: f32) -> f32 { let q = opq(a / b); return q + fma(-q, b, a) / b; }
fn csqrt(x: f32) -> f32 { let s = opq(sqrt(x)); return s + fma(-s, s, x) / (2.0 * s); }
var<workgroup> rh: array<f32, ${WG}>;
var<workgroup> rl: array<f32, ${WG}>;
@compute @workgroup_size(${WG})
fn main(${IDX}) {
  ${GROUP}
  if (grp >= p.nrows) { return; }
  let base = grp * p.len;
  var hi = 0.0; var lo = 0.0;
  for (var i = lid; i < p.len; i += ${WG}u) { let v = A[base + i]; ffadd(&hi, &lo, opq(v * v)); }
  rh[lid] = hi; rl[lid] = lo;
  workgroupBarrier();
  for (var k = ${WG / 2}u; k > 0u; k >>= 1u) {
    if (lid < k) { var h = rh[lid]; var l = rl[lid] + rl[lid + k]; ffadd(&h, &l, rh[lid + k]); rh[lid] = h; rl[lid] = l; }
    workgroupBarrier();
  }
  let sum = rh[0] + rl[0];
  ${scale}
  for (var i = lid; i < p.len; i += ${WG}u) { Y[base + i] = A[base + i] * scale; }
}`;
}

/** RoPE: a thread per element; cos/sin per (token, pair) from a table the host computes with ggml's libm (T) */
export function ropeShader(): string {
  return `${COMMON}
struct P { n: u32, rowLen: u32, headDim: u32, nDims: u32, neox: u32, never: u32 }
fn opq(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ p.never); }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> A: array<f32>;
@group(0) @binding(2) var<storage, read_write> T: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;
@compute @workgroup_size(${WG})
fn main(${IDX}) {
  ${GROUP}
  let i = grp * ${WG}u + lid;
  if (i >= p.n) { return; }
  let t = i / p.rowLen; let d = (i % p.rowLen) % p.headDim; let hb = i - d;
  if (d >= p.nDims) { Y[i] = A[i]; return; }
  let half = p.nDims / 2u;
  var j: u32; var first: bool; var i0: u32; var i1: u32;
  if (p.neox != 0u) { j = d % half; first = d < half; i0 = hb + j; i1 = i0 + half; }
  else { j = d / 2u; first = (d & 1u) == 0u; i0 = hb + 2u * j; i1 = i0 + 1u; }
  let c = T[t * p.nDims + 2u * j]; let s = T[t * p.nDims + 2u * j + 1u];
  let x0 = A[i0]; let x1 = A[i1];
  // ggml's x0*cos - x1*sin as GCC contracts it: fma(x0, cos, -(x1*sin)), the product rounded
  if (first) { Y[i] = fma(x0, c, -opq(x1 * s)); } else { Y[i] = fma(x0, s, opq(x1 * c)); }
}`;
}

/** kv_store: row pos[t] of the cache = x[t] (f16: a thread per pair of values, one u32 word each) */
export function kvStoreShader(f16: boolean): string {
  return `${COMMON}
struct P { rowLen: u32, nTok: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> C: array<${f16 ? 'u32' : 'f32'}>;
@group(0) @binding(2) var<storage, read_write> X: array<f32>;
@group(0) @binding(3) var<storage, read_write> POS: array<i32>;
@compute @workgroup_size(${WG})
fn main(${IDX}) {
  ${GROUP}
  let i = grp * ${WG}u + lid;
  ${f16 ? `let per = p.rowLen / 2u;
  if (i >= p.nTok * per) { return; }
  let t = i / per; let c = i % per;
  let x = t * p.rowLen + 2u * c;
  C[u32(POS[t]) * per + c] = f16bits(X[x]) | (f16bits(X[x + 1u]) << 16u);` : `if (i >= p.nTok * p.rowLen) { return; }
  let t = i / p.rowLen;
  C[u32(POS[t]) * p.rowLen + i % p.rowLen] = X[i];`}
}`;
}

/** ggml_v_expf (ggml-cpu vec.h, the AVX-512 FMA polynomial ggml's softmax and SiLU use), op by op */
const f32lit = (x: number) => { const v = Math.fround(x); return Number.isInteger(v) ? `${v}.0` : v.toPrecision(9); };
// Mesa's compiler treats float math as reassociable: (z - c) after fma(x, y, c) becomes x * y, TwoSum's error
// term becomes 0 (measured on lavapipe and GLES). opq() hides a value behind a uniform the compiler cannot see
// (its bits XORed with P.never, always 0), so the roundings written here are the ones computed.
const OPQ = 'fn opq(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ p.never); }\n' +
  '// hi + lo += x, the error term kept (TwoSum through opq)\n' +
  'fn ffadd(hi: ptr<function, f32>, lo: ptr<function, f32>, x: f32) { let a = *hi; let s = opq(a + x); let bb = opq(s - a); *lo += (a - opq(s - bb)) + (x - bb); *hi = s; }\n';
const EXPV = `
${OPQ}
// a division rounded once (WGSL's need not be): the quotient corrected by its exact residual
fn cdiv(a: f32, b: f32) -> f32 { let q = opq(a / b); return q + fma(-q, b, a) / b; }
fn expv(x: f32) -> f32 {
  let z = fma(x, ${f32lit(0x1715476 / 2 ** 24)}, 12582912.0);
  let n = opq(z) - 12582912.0;
  let b = fma(-n, ${f32lit(0x17f7d1c / 2 ** 44)}, fma(-n, ${f32lit(0x162e4 / 2 ** 17)}, x));
  if (abs(n) > 192.0) { return select(0.0, bitcast<f32>(0x7f800000u | (bitcast<u32>(x) & 0u)), n > 0.0); } // (inf, not a constant: WGSL rejects an infinite constant)
  let u = b * b;
  let j = fma(fma(fma(${f32lit(0x10e4020 / 2 ** 31)}, b, ${f32lit(0x1573e2e / 2 ** 29)}), u, fma(${f32lit(0x1555e66 / 2 ** 27)}, b, ${f32lit(0x1fffdb6 / 2 ** 26)})), u, fma(${f32lit(0x1ffffec / 2 ** 25)}, b, 1.0));
  return ldexp(j, i32(n));
}
`;
/** _mm512_reduce_add_ps's tree over 16 lanes L(0..15) (GCC's order: hi256 + lo256, hi128 + lo128, [0]+[2], [1]+[3], [0]+[1]) */
// (every partial sum behind opq: Mesa reorders an unguarded tree, measured in V.softmax from 25 keys on)
const tree16 = (L: (i: number) => string) => {
  const t3 = (i: number) => `opq(${L(i)} + ${L(i + 8)})`;
  return `opq(opq(opq(${t3(0)} + ${t3(4)}) + opq(${t3(2)} + ${t3(6)})) + opq(opq(${t3(1)} + ${t3(5)}) + opq(${t3(3)} + ${t3(7)})))`;
};

/**
 * Attention of one (token, head) per workgroup over cache rows [lo, pos[t]] (causal, sliding window), as the
 * reference backend reproduces ggml's non-flash CPU path for an f16 cache, the order of every rounding included
 * (a last-bit difference here flips the 8-bit rounding of the next matmul's activations): Q rounded to f16; K.Q
 * and V.softmax in ggml_vec_dot_f16's order for one token (64 lanes folded to 16, _mm512_reduce_add_ps, the
 * tail in double) or tinyBLAS's for a batch (16 lanes); softcap, scale; softmax with ggml_v_expf over 16-key
 * chunks, each chunk's 16 values reduced in f32 and the chunk sums added in double (float-float here); weights
 * rounded to f16. Up to ATTN_EXACT_KEYS keys the scores and weights stay in workgroup memory; longer spans (and
 * f32 caches) take three passes recomputing the scores, in the kernel's own order.
 */
export const ATTN_EXACT_KEYS = 2048;
export function attentionShader(f16: boolean, batch: boolean): string {
  const kAt = (e: string) => f16 ? `unpack2x16float(K[(${e}) >> 1u])[(${e}) & 1u]` : `K[${e}]`;
  const vAt = (e: string) => f16 ? `unpack2x16float(V[(${e}) >> 1u])[(${e}) & 1u]` : `V[${e}]`;
  // K.Q over dk: ggml's order (exact path) and a plain one (long spans, f32 caches)
  const kqLane16 = (l: number) => `kql(ko, ${l}u, 16u, p.dk)`;
  const kqLane64 = (l: number) => `opq(opq(kql(ko, ${l}u, 64u, np) + kql(ko, ${l + 32}u, 64u, np)) + opq(kql(ko, ${l + 16}u, 64u, np) + kql(ko, ${l + 48}u, 64u, np)))`;
  const vLane16 = (l: number) => `vl(vo, ${l}u, 16u, p0)`;
  const vLane64 = (l: number) => `opq(opq(vl(vo, ${l}u, 64u, p0) + vl(vo, ${l + 32}u, 64u, p0)) + opq(vl(vo, ${l + 16}u, 64u, p0) + vl(vo, ${l + 48}u, 64u, p0)))`;
  const exactKq = batch ? `return ${tree16(kqLane16)};` : `
  let np = p.dk & ~63u;
  var hi = 0.0;
  if (np > 0u) { hi = ${tree16(kqLane64)}; }
  var lo = 0.0;
  for (var i = np; i < p.dk; i++) { ffadd(&hi, &lo, qs[i] * ${kAt('ko + i')}); }
  return hi + lo;`;
  return `${COMMON}${EXPV}
struct P { nHead: u32, nHeadKv: u32, dk: u32, dv: u32, nTok: u32, window: u32, scale: f32, softcap: f32, invcap: f32, never: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> Q: array<f32>;
@group(0) @binding(2) var<storage, read_write> K: array<${f16 ? 'u32' : 'f32'}>;
@group(0) @binding(3) var<storage, read_write> V: array<${f16 ? 'u32' : 'f32'}>;
@group(0) @binding(4) var<storage, read_write> POS: array<i32>;
@group(0) @binding(5) var<storage, read_write> Y: array<f32>;
var<workgroup> qs: array<f32, ${ATTN_MAX_HEAD}>;
var<workgroup> sc: array<f32, ${WG}>;
var<workgroup> ws: array<f32, ${ATTN_EXACT_KEYS}>;
var<workgroup> cs: array<f32, ${ATTN_EXACT_KEYS / 16}>;
var<workgroup> wp0: u32;
var<workgroup> winv: f32;
var<private> kvh: u32;
var<private> rowK: u32;
var<private> rowV: u32;
// one lane of K.Q: q_i * k_i summed in f32 over i = l, l + step, ... < n (f16 x f16 products are exact)
fn kql(ko: u32, l: u32, step: u32, n: u32) -> f32 { var a = 0.0; for (var i = l; i < n; i += step) { a = opq(a + qs[i] * ${kAt('ko + i')}); } return a; }
fn kqExact(j: u32) -> f32 { let ko = j * rowK + kvh * p.dk; ${exactKq} }
fn kqPlain(j: u32) -> f32 { let ko = j * rowK + kvh * p.dk; var s = 0.0; for (var i = 0u; i < p.dk; i++) { s = fma(qs[i], ${kAt('ko + i')}, s); } return s; }
fn post(s0: f32) -> f32 { var s = s0; if (p.softcap > 0.0) { s = tanh_(s * p.invcap) * p.softcap; } return s * p.scale; }
// one lane of V.softmax for the value at vo + j * rowV: w_j * v_j over keys j = l, l + step, ... <= p0
fn vl(vo: u32, l: u32, step: u32, p0: u32) -> f32 { var a = 0.0; for (var j = l; j <= p0; j += step) { a = opq(a + ws[j] * ${vAt('vo + j * rowV')}); } return a; }
@compute @workgroup_size(${WG})
fn main(${IDX}) {
  ${GROUP}
  if (grp >= p.nTok * p.nHead) { return; }
  let t = grp / p.nHead; let h = grp % p.nHead;
  kvh = h / (p.nHead / p.nHeadKv);
  rowK = p.nHeadKv * p.dk;
  rowV = p.nHeadKv * p.dv;
  if (lid == 0u) { wp0 = u32(POS[t]); }
  let p0 = workgroupUniformLoad(&wp0);
  for (var i = lid; i < p.dk; i += ${WG}u) { let q = Q[t * p.dk * p.nHead + h * p.dk + i]; qs[i] = ${f16 ? 'f16r(q)' : 'q'}; }
  workgroupBarrier();
  var lo = 0u;
  if (p.window > 0u && p0 + 1u > p.window) { lo = p0 + 1u - p.window; }
  if (${f16 ? 'true' : 'false'} && p0 < ${ATTN_EXACT_KEYS}u) {
    // exact path: scores, then weights, in ws (indexed by cache row; rows below lo weigh 0)
    var m = -3.0e38;
    for (var j = lid; j <= p0; j += ${WG}u) {
      var s = 0.0;
      if (j >= lo) { s = post(kqExact(j)); m = max(m, s); }
      ws[j] = s;
    }
    sc[lid] = m;
    workgroupBarrier();
    for (var k = ${WG / 2}u; k > 0u; k >>= 1u) { if (lid < k) { sc[lid] = max(sc[lid], sc[lid + k]); } workgroupBarrier(); }
    let mx = sc[0];
    for (var j = lid; j <= p0; j += ${WG}u) { if (j >= lo) { ws[j] = expv(ws[j] - mx); } else { ws[j] = 0.0; } }
    workgroupBarrier();
    // 16-key chunks from lo & ~15, each reduced in f32 as _mm512_reduce_add_ps (keys past p0 are 0)
    let c0 = lo >> 4u; let nc = (p0 >> 4u) + 1u - c0;
    for (var c = lid; c < nc; c += ${WG}u) {
      let b = (c0 + c) * 16u;
      cs[c] = ${tree16((i) => `select(0.0, ws[min(b + ${i}u, p0)], b + ${i}u <= p0)`)};
    }
    workgroupBarrier();
    if (lid == 0u) {
      // the chunk sums added in double: float-float, then 1/sum rounded once
      var hi = 0.0; var lw = 0.0;
      for (var c = 0u; c < nc; c++) { ffadd(&hi, &lw, cs[c]); }
      var r = 1.0 / hi;
      var e = fma(-r, hi, 1.0);
      e = fma(-r, lw, e);
      winv = fma(r, e, r);
    }
    let inv = workgroupUniformLoad(&winv);
    for (var j = lid; j <= p0; j += ${WG}u) { ws[j] = ${f16 ? 'f16r(ws[j] * inv)' : 'ws[j] * inv'}; }
    workgroupBarrier();
    for (var d = lid; d < p.dv; d += ${WG}u) {
      let vo = kvh * p.dv + d;
      Y[t * p.dv * p.nHead + h * p.dv + d] = ${batch ? tree16(vLane16) : tree16(vLane64)};
    }
    return;
  }
  // long spans: max, sum, weighted V in three passes, scores recomputed
  var m = -3.0e38;
  for (var j = lo + lid; j <= p0; j += ${WG}u) { m = max(m, post(kqPlain(j))); }
  sc[lid] = m;
  workgroupBarrier();
  for (var k = ${WG / 2}u; k > 0u; k >>= 1u) { if (lid < k) { sc[lid] = max(sc[lid], sc[lid + k]); } workgroupBarrier(); }
  let mx = sc[0];
  workgroupBarrier();
  var sum = 0.0;
  for (var j = lo + lid; j <= p0; j += ${WG}u) { sum += expv(post(kqPlain(j)) - mx); }
  sc[lid] = sum;
  workgroupBarrier();
  for (var k = ${WG / 2}u; k > 0u; k >>= 1u) { if (lid < k) { sc[lid] += sc[lid + k]; } workgroupBarrier(); }
  let inv = 1.0 / sc[0];
  workgroupBarrier();
  var acc: array<f32, ${ATTN_MAX_HEAD / WG}>;
  for (var c = 0u; c < ${ATTN_MAX_HEAD / WG}u; c++) { acc[c] = 0.0; }
  for (var j0 = lo; j0 <= p0; j0 += ${WG}u) {
    let cnt = min(${WG}u, p0 + 1u - j0);
    if (lid < cnt) { let w = expv(post(kqPlain(j0 + lid)) - mx) * inv; sc[lid] = ${f16 ? 'f16r(w)' : 'w'}; }
    workgroupBarrier();
    for (var c = 0u; c < ${ATTN_MAX_HEAD / WG}u; c++) {
      let d = lid + c * ${WG}u;
      if (d < p.dv) {
        var a = acc[c];
        for (var k = 0u; k < cnt; k++) { a = fma(sc[k], ${vAt('(j0 + k) * rowV + kvh * p.dv + d')}, a); }
        acc[c] = a;
      }
    }
    workgroupBarrier();
  }
  for (var c = 0u; c < ${ATTN_MAX_HEAD / WG}u; c++) {
    let d = lid + c * ${WG}u;
    if (d < p.dv) { Y[t * p.dv * p.nHead + h * p.dv + d] = acc[c]; }
  }
}`;
}

/**
 * F16 weights: the activations rounded to f16 (ggml's vec_dot_type for F16). The quantized weight types'
 * activations (Q8_0, Q8_K as int8 blocks) are shaders-mmq.ts.
 */
export type ActQuant = 'q8_0' | 'q8_k' | 'f16';
export function actQuantShader(kind: 'f16'): string {
  const body = `if (i >= p.n) { return; }
  Y[i] = f16r(X[i]);`;
  return `${COMMON}
struct P { n: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@compute @workgroup_size(${WG})
fn main(${IDX}) {
  ${GROUP}
  let i = grp * ${WG}u + lid;
  ${body}
}`;
}
