// Quantized matmuls with ggml's numerics (the x86 build that made the parity fixtures): the activations are
// quantized as ggml does (Q8_0: the x86 quantize_row_q8_0; Q8_K: quantize_row_q8_K, or for the rows of
// llama.cpp's repacked Q4_K GEMM its 4x8 quantizer's tie rule), the block dot products are integers (exact in
// any order), and the block scales are combined in llama.cpp's float order for the weight type and shape
// (src/backends/ggml-routing.ts picks the kernel, src/backends/reference/matmul.ts and src/quant/vec-dot.ts
// spell out each order). fmaX (fma.ts) is a fused multiply-add whatever the driver's fma is.
//
// Layout of the quantized activations (one u32 buffer, M rows of K): the int8 values packed 4 per word
// (row t at word t*K/4), then one f32 scale per block at dOff (Q8_0: the f16-rounded d; Q8_K: d), then for
// Q8_K the 16 block sums per super-block as i32 at bOff.
//
// A matmul workgroup: MMQ_ROWS weight rows x MMQ_TM tokens (vec4 lanes, one per token), 8 threads per row:
// - Q8_0, Q6_K, Q4_K (not repacked): thread l is ggml's SIMD lane l (values 4l..4l+3 of every 32), its
//   accumulator fused-multiply-added per block, then hsum_float_8 (and Q4_K's 4 min lanes);
// - Q4_0 and repacked Q4_K: one FMA chain per output (per block, per super-block (GEMV) or per 64 values
//   (GEMM)); the 8 threads compute 8 blocks' (sub-blocks') integer dots, thread 0 folds them in order.
import { GgmlType } from '../../gguf/ggml-types.js';

export const MMQ_ROWS = 8;
export const MMQ_TM = 4;
const WG = 64;
export type ActQ = 'q8_0' | 'q8_k';

/** words of quantized activations (values, scales, block sums) for n = M*K values, and where scales/sums start */
export function actLayout(kind: ActQ, n: number): { dOff: number; bOff: number; words: number } {
  const dOff = n / 4;
  if (kind === 'q8_0') return { dOff, bOff: 0, words: dOff + n / 32 };
  return { dOff, bOff: dOff + n / 256, words: dOff + n / 256 + n / 16 };
}

const HELPERS = /* wgsl */ `
fn opq(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ p.never); }
fn opq4(v: vec4<f32>) -> vec4<f32> { return bitcast<vec4<f32>>(bitcast<vec4<u32>>(v) ^ vec4<u32>(p.never)); }
// a division rounded once (WGSL's need not be): the quotient corrected by its exact residual
fn cdiv(a: f32, b: f32) -> f32 { let q = opq(a / b); return q + fmaX(-q, b, a) / b; }
`;

/** per 32 (Q8_0) or 256 (Q8_K) activations: the int8 values, the scale, (Q8_K) the 16 block sums */
export function actQuantQShader(kind: ActQ): string {
  const f16r = /* wgsl */ `
fn f16r(f: f32) -> f32 {
  let x = bitcast<u32>(f);
  let sign = (x >> 16u) & 0x8000u;
  let e = i32((x >> 23u) & 0xffu);
  let m = x & 0x7fffffu;
  let he = e - 112;
  var h: u32;
  if (he >= 31) { h = sign | 0x7c00u; }
  else if (he <= 0) {
    if (he < -10) { h = sign; } else {
      let mm = m | 0x800000u; let sh = u32(14 - he);
      var q = mm >> sh; let rem = mm & ((1u << sh) - 1u); let half = 1u << (sh - 1u);
      if (rem > half || (rem == half && (q & 1u) == 1u)) { q = q + 1u; }
      h = sign | q;
    }
  } else {
    var q = (u32(he) << 10u) | (m >> 13u);
    let rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u) == 1u)) { q = q + 1u; }
    h = sign | q;
  }
  return unpack2x16float(h).x;
}`;
  const q80 = /* wgsl */ `
  if (i >= p.n / 32u) { return; }
  let o = i * 32u;
  var amax = 0.0;
  for (var j = 0u; j < 32u; j++) { amax = max(amax, abs(X[o + j])); }
  // x86 quantize_row_q8_0: d = amax/127 stored as f16, id = 127/amax, values rounded half to even
  let d = f16r(cdiv(amax, 127.0));
  var id = 0.0;
  if (amax != 0.0) { id = cdiv(127.0, amax); }
  for (var w = 0u; w < 8u; w++) {
    var packed = 0u;
    for (var k = 0u; k < 4u; k++) { packed |= (u32(i32(round(opq(X[o + 4u * w + k] * id)))) & 255u) << (8u * k); }
    A[i * 8u + w] = packed;
  }
  A[p.dOff + i] = bitcast<u32>(d);`;
  const q8k = /* wgsl */ `
  if (i >= p.n / 256u) { return; }
  let o = i * 256u;
  var amax = 0.0; var mx = 0.0;
  for (var j = 0u; j < 256u; j++) { let a = abs(X[o + j]); if (a > amax) { amax = a; mx = X[o + j]; } }
  if (amax == 0.0) {
    for (var w = 0u; w < 64u; w++) { A[i * 64u + w] = 0u; }
    for (var g = 0u; g < 16u; g++) { A[p.bOff + i * 16u + g] = 0u; }
    A[p.dOff + i] = 0u;
    return;
  }
  // ggml_quantize_mat_q8_K_4x8 (rows of the repacked Q4_K GEMM): +amax wins over -amax
  if (i / (p.K / 256u) < p.gemmRows && mx < 0.0) {
    for (var j = 0u; j < 256u; j++) { if (X[o + j] == amax) { mx = amax; } }
  }
  let iscale = cdiv(-127.0, mx);
  for (var g = 0u; g < 16u; g++) {
    var s = 0;
    for (var w = 0u; w < 4u; w++) {
      var packed = 0u;
      for (var k = 0u; k < 4u; k++) {
        let q = clamp(i32(round(opq(iscale * X[o + 16u * g + 4u * w + k]))), -128, 127);
        s += q;
        packed |= (u32(q) & 255u) << (8u * k);
      }
      A[i * 64u + 4u * g + w] = packed;
    }
    A[p.bOff + i * 16u + g] = bitcast<u32>(s);
  }
  A[p.dOff + i] = bitcast<u32>(cdiv(1.0, iscale));`;
  return `
struct P { n: u32, K: u32, gemmRows: u32, dOff: u32, bOff: u32, never: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> A: array<u32>;
${HELPERS}${kind === 'q8_0' ? f16r : ''}
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nw.x + wid.x) * ${WG}u + lid;
  ${kind === 'q8_0' ? q80 : q8k}
}`;
}

function laneBody(type: number): string {
  switch (type) {
    case GgmlType.Q8_0: return `
  let nb = p.K / 32u;
  for (var b = 0u; b < nb; b++) {
    let a = base + b * 34u;
    let s = dot4(s8x4(rd4(a + 2u + 4u * l)), b * 8u + l);
    acc = fmaX4(rdh(a) * ad(nb, b), vec4<f32>(s), acc);
  }`;
    case GgmlType.Q6_K: return `
  let nb = p.K / 256u;
  for (var b = 0u; b < nb; b++) {
    let a = base + b * 210u;
    let d = rdh(a + 208u) * ad(nb, b);
    var li = vec4<i32>(0);
    for (var hf = 0u; hf < 2u; hf++) {
      let qhw = rd4(a + 128u + 32u * hf + 4u * l);
      for (var r = 0u; r < 4u; r++) {
        let qlw = rd4(a + 64u * hf + 32u * (r & 1u) + 4u * l);
        let v = ((qlw >> select(0u, 4u, r >= 2u)) & 0x0f0f0f0fu) | (((qhw >> (2u * r)) & 0x03030303u) << 4u);
        let sc = si8(rdb(a + 192u + 8u * hf + 2u * r + select(0u, 1u, l >= 4u)));
        li += sc * dot4(u8x4(v), (b * 256u + 128u * hf + 32u * r) / 4u + l);
      }
    }
    // the 6-bit values' -32 offset through the block sums (lane l: groups 2l, 2l+1)
    let sub = 32 * (bs(b * 16u + 2u * l) * si8(rdb(a + 192u + 2u * l)) + bs(b * 16u + 2u * l + 1u) * si8(rdb(a + 193u + 2u * l)));
    acc = fmaX4(d, vec4<f32>(li - sub), acc);
  }`;
    case GgmlType.Q4_K: return `
  let nb = p.K / 256u;
  for (var b = 0u; b < nb; b++) {
    let a = base + b * 144u;
    let yd = ad(nb, b);
    let d = yd * rdh(a); let dmin = -yd * rdh(a + 2u);
    var li = vec4<i32>(0);
    for (var j = 0u; j < 8u; j++) {
      let q = (W[(a + 16u + 32u * (j >> 1u) + 4u * l) >> 2u] >> (4u * (j & 1u))) & 0x0f0f0f0fu;
      li += i32(scm(a, j).x) * dot4(u8x4(q), (b * 256u + 32u * j) / 4u + l);
    }
    acc = fmaX4(d, vec4<f32>(li), acc);
    if (l < 4u) {
      var mn = vec4<i32>(0);
      for (var j = 2u * l; j < 2u * l + 2u; j++) { mn += i32(scm(a, j).y) * (bs(b * 16u + 2u * j) + bs(b * 16u + 2u * j + 1u)); }
      macc = fmaX4(dmin, vec4<f32>(mn), macc);
    }
  }`;
  }
  throw new Error(`webgpu: no lane kernel for ggml type ${type}`);
}

function chainBody(type: number): string {
  if (type === GgmlType.Q4_0) return `
  let nb = p.K / 32u;
  for (var c = 0u; c < (nb + 7u) / 8u; c++) {
    let b = c * 8u + l;
    var s = vec4<i32>(0);
    if (live && b < nb) {
      let a = base + b * 18u;
      for (var i = 0u; i < 4u; i++) {
        let w = rd4(a + 2u + 4u * i);
        s += dot4(u8x4(w & 0x0f0f0f0fu) - vec4<i32>(8), b * 8u + i) + dot4(u8x4((w >> 4u) & 0x0f0f0f0fu) - vec4<i32>(8), b * 8u + 4u + i);
      }
    }
    wi[lid] = s;
    workgroupBarrier();
    if (live && l == 0u) {
      for (var i = 0u; i < min(8u, nb - c * 8u); i++) {
        let bb = c * 8u + i;
        let sv = vec4<f32>(wi[lid + i]);
        let dw = rdh(base + bb * 18u);
        // repacked (ggml_gemv/gemm_q4_0_8x8_q8_0): one FMA per block; else ggml_vec_dot_q4_0_q8_0's sum
        if (p.repack != 0u) { acc = fmaX4(sv, opq4(dw * ad(nb, bb)), acc); }
        else { acc = opq4(acc + opq4(opq4(sv * dw) * ad(nb, bb))); }
      }
    }
    workgroupBarrier();
  }`;
  if (type === GgmlType.Q4_K) return `
  let nb = p.K / 256u;
  let gemm = t0 + ${MMQ_TM}u <= p.gemmRows;
  for (var b = 0u; b < nb; b++) {
    let a = base + b * 144u;
    var s = vec4<i32>(0); var mn = vec4<i32>(0);
    if (live) {
      // thread l: sub-block l's integer dot (its scale applied) and its min term
      let sm = scm(a, l);
      for (var i = 0u; i < 8u; i++) {
        let q = (W[(a + 16u + 32u * (l >> 1u) + 4u * i) >> 2u] >> (4u * (l & 1u))) & 0x0f0f0f0fu;
        s += dot4(u8x4(q), (b * 256u + 32u * l) / 4u + i);
      }
      s *= i32(sm.x);
      mn = i32(sm.y) * (bs(b * 16u + 2u * l) + bs(b * 16u + 2u * l + 1u));
    }
    wi[lid] = s; wm[lid] = mn;
    workgroupBarrier();
    if (live && l == 0u) {
      let yd = ad(nb, b);
      let dd = opq4(rdh(a) * yd); let dm = opq4(rdh(a + 2u) * yd);
      if (gemm) {
        // ggml_gemm_q4_K_8x8_q8_K: an FMA per pair of sub-blocks
        for (var k = 0u; k < 8u; k += 2u) {
          acc = fmaX4(vec4<f32>(wi[lid + k] + wi[lid + k + 1u]), dd, acc);
          accm = fmaX4(vec4<f32>(wm[lid + k] + wm[lid + k + 1u]), dm, accm);
        }
      } else {
        // ggml_gemv_q4_K_8x8_q8_K: an FMA per super-block
        var ss = vec4<i32>(0); var sm = vec4<i32>(0);
        for (var k = 0u; k < 8u; k++) { ss += wi[lid + k]; sm += wm[lid + k]; }
        acc = fmaX4(vec4<f32>(ss), dd, acc);
        accm = fmaX4(vec4<f32>(sm), dm, accm);
      }
    }
    workgroupBarrier();
  }`;
  throw new Error(`webgpu: no chain kernel for ggml type ${type}`);
}

/**
 * y[t][r0 + r] = W[r] . x[t] for a quantized weight, x quantized by actQuantQShader. `chain`: Q4_0, or Q4_K
 * repacked by llama.cpp (rows % 8 == 0); else the lane kernels (Q8_0, Q6_K, Q4_K not repacked).
 */
export function mulMatQShader(type: number, chain: boolean): string {
  const lanes = !chain;
  return `
struct P { K: u32, N: u32, M: u32, rowBytes: u32, r0: u32, nOut: u32, nRowGroups: u32, nTiles: u32, repack: u32, gemmRows: u32, dOff: u32, bOff: u32, never: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> W: array<u32>;
@group(0) @binding(2) var<storage, read_write> A: array<u32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;
${HELPERS}
fn rdb(a: u32) -> u32 { return (W[a >> 2u] >> ((a & 3u) * 8u)) & 0xffu; }
fn rdh(a: u32) -> f32 { return unpack2x16float((W[a >> 2u] >> ((a & 2u) * 8u)) & 0xffffu).x; }
fn si8(b: u32) -> i32 { return bitcast<i32>(b << 24u) >> 24u; }
// 4 weight bytes at any byte address
fn rd4(a: u32) -> u32 { let i = a >> 2u; let sh = (a & 3u) * 8u; if (sh == 0u) { return W[i]; } return (W[i] >> sh) | (W[i + 1u] << (32u - sh)); }
fn s8x4(w: u32) -> vec4<i32> { let v = bitcast<i32>(w); return vec4<i32>(v << 24u, v << 16u, v << 8u, v) >> vec4<u32>(24u); }
fn u8x4(w: u32) -> vec4<i32> { return vec4<i32>(vec4<u32>(w, w >> 8u, w >> 16u, w >> 24u) & vec4<u32>(255u)); }
// Q4_K's 6-bit scale and min of sub-block j (get_scale_min_k4)
fn scm(a: u32, j: u32) -> vec2<u32> {
  if (j < 4u) { return vec2<u32>(rdb(a + 4u + j) & 63u, rdb(a + 8u + j) & 63u); }
  return vec2<u32>((rdb(a + 8u + j) & 15u) | ((rdb(a + j) >> 6u) << 4u), (rdb(a + 8u + j) >> 4u) | ((rdb(a + 4u + j) >> 6u) << 4u));
}
var<private> tk: vec4<u32>;
var<private> kW: u32;
// the integer dot of 4 weight values with activation word kw of each of the 4 tokens
fn dot4(wv: vec4<i32>, kw: u32) -> vec4<i32> {
  return vec4<i32>(dot(wv, s8x4(A[tk.x * kW + kw])), dot(wv, s8x4(A[tk.y * kW + kw])), dot(wv, s8x4(A[tk.z * kW + kw])), dot(wv, s8x4(A[tk.w * kW + kw])));
}
fn ad(nb: u32, b: u32) -> vec4<f32> {
  return vec4<f32>(bitcast<f32>(A[p.dOff + tk.x * nb + b]), bitcast<f32>(A[p.dOff + tk.y * nb + b]), bitcast<f32>(A[p.dOff + tk.z * nb + b]), bitcast<f32>(A[p.dOff + tk.w * nb + b]));
}
fn bs(g: u32) -> vec4<i32> {
  let n = p.K / 16u;
  return vec4<i32>(bitcast<i32>(A[p.bOff + tk.x * n + g]), bitcast<i32>(A[p.bOff + tk.y * n + g]), bitcast<i32>(A[p.bOff + tk.z * n + g]), bitcast<i32>(A[p.bOff + tk.w * n + g]));
}
${lanes ? `var<workgroup> red: array<vec4<f32>, ${WG}>;\nvar<workgroup> redm: array<vec4<f32>, ${WG}>;` : `var<workgroup> wi: array<vec4<i32>, ${WG}>;\nvar<workgroup> wm: array<vec4<i32>, ${WG}>;`}
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let grp = wid.y * nw.x + wid.x;
  if (grp >= p.nRowGroups * p.nTiles) { return; }
  let rg = grp % p.nRowGroups; let tile = grp / p.nRowGroups;
  let r = rg * ${MMQ_ROWS}u + lid / 8u; let l = lid % 8u;
  let t0 = tile * ${MMQ_TM}u;
  tk = min(vec4<u32>(t0, t0 + 1u, t0 + 2u, t0 + 3u), vec4<u32>(p.M - 1u));
  kW = p.K / 4u;
  let live = r < p.N;
  let base = min(r, p.N - 1u) * p.rowBytes;
  var acc = vec4<f32>(0.0);
  ${lanes ? `var macc = vec4<f32>(0.0);
  ${laneBody(type)}
  red[lid] = acc; redm[lid] = macc;
  workgroupBarrier();
  if (!live || l != 0u) { return; }
  // hsum_float_8: (lanes 0-3 + lanes 4-7), then [0]+[2], [1]+[3], their sum
  let r0 = opq4(red[lid] + red[lid + 4u]); let r1 = opq4(red[lid + 1u] + red[lid + 5u]);
  let r2 = opq4(red[lid + 2u] + red[lid + 6u]); let r3 = opq4(red[lid + 3u] + red[lid + 7u]);
  var y = opq4(opq4(r0 + r2) + opq4(r1 + r3));
  ${type === GgmlType.Q4_K ? 'y = y + opq4(opq4(redm[lid] + redm[lid + 2u]) + opq4(redm[lid + 1u] + redm[lid + 3u]));' : ''}` : `var accm = vec4<f32>(0.0);
  ${chainBody(type)}
  if (!live || l != 0u) { return; }
  var y = acc - accm;`}
  for (var i = 0u; i < ${MMQ_TM}u; i++) {
    let t = t0 + i;
    if (t < p.M) { Y[t * p.nOut + p.r0 + r] = y[i]; }
  }
}`;
}
