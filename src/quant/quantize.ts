// Reference quantizers: the semantics of ggml's quantize_row_*_ref (ggml-quants.c), i.e. what
// llama-quantize does without an importance matrix (for the K-quants and legacy types). Used to
// build synthetic models; for activations see quantizeActivations in vec-dot.ts. Checked
// bit-exact against ggml's libggml-base (test/quant/golden.test.ts).
//
// ggml does all of this in f32 (compiled without FMA contraction), so every float operation
// below is wrapped in Math.fround (`f`) in the same order as the C expression. Rounding
// helpers: C's roundf (half away from zero), ggml's nearest_int (half to even, via the
// 1.5*2^23 trick) and the (int8_t) truncation casts all differ on ties; each is kept.
// Scratch buffers are module-level so a row quantization does not allocate.

import { GgmlType, ggmlTypeName } from '../gguf/ggml-types.js';
import {
  IQ4_NL_BYTES, IQ4_XS_BYTES, IQ4XS_D, IQ4XS_QS, IQ4XS_SCALES_H, IQ4XS_SCALES_L, KVALUES_IQ4NL, Q2_K_BYTES, Q2K_D, Q2K_DMIN, Q2K_QS, Q2K_SCALES, Q3_K_BYTES, Q3K_D, Q3K_HMASK, Q3K_QS,
  Q3K_SCALES, Q4_0_BYTES, Q4_1_BYTES, Q4_K_BYTES, Q4K_D, Q4K_DMIN, Q4K_QS, Q4K_SCALES, Q5_0_BYTES, Q5_1_BYTES,
  Q5_K_BYTES, Q5K_D, Q5K_DMIN, Q5K_QH, Q5K_QS, Q5K_SCALES, Q6_K_BYTES, Q6K_D, Q6K_QH, Q6K_QL, Q6K_SCALES, Q8_0_BYTES,
  Q8_1_BYTES, Q8_K_BYTES, Q8K_BSUMS, Q8K_D, Q8K_QS, QK, QK_K, scaleMinK4, scaleQ3K,
} from './blocks.js';
import { DataViewCache, checkBlocks, writeU16, writeU32 } from './bytes.js';
import { F16_TO_F32, f32ToBf16, f32ToF16 } from './float16.js';
import { nearestInt, roundf, truncInt as trunc } from './rounding.js';
import { putF16, quantBF16, quantF16, quantF32, quantQ8_0, quantQ8_1, quantQ8_K, type QuantizeFn } from './activations.js';

const f = Math.fround;

/** GROUP_MAX_EPS: below this a group counts as all-zero. */
const GROUP_MAX_EPS = f(1e-15);
const F_0_1 = f(0.1);
const FLT_MAX = 3.4028234663852886e38;

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}


// ---------------------------------------------------------------- legacy 32-value blocks

function quantQ4_0(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q4_0', n, QK);
  for (let i = 0; i < nb; i++, xo += QK, yo += Q4_0_BYTES) {
    // The value of largest magnitude, with its sign, maps to level -8 exactly.
    let amax = 0, max = 0;
    for (let j = 0; j < QK; j++) {
      const v = x[xo + j]!;
      if (amax < Math.abs(v)) { amax = Math.abs(v); max = v; }
    }
    const d = f(max / -8);
    const id = d !== 0 ? f(1 / d) : 0;
    putF16(y, yo, d);
    for (let j = 0; j < 16; j++) {
      const x0 = f(x[xo + j]! * id);
      const x1 = f(x[xo + 16 + j]! * id);
      const q0 = Math.min(15, trunc(f(x0 + 8.5)));
      const q1 = Math.min(15, trunc(f(x1 + 8.5)));
      y[yo + 2 + j] = q0 | (q1 << 4);
    }
  }
}

function quantQ4_1(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q4_1', n, QK);
  for (let i = 0; i < nb; i++, xo += QK, yo += Q4_1_BYTES) {
    let min = FLT_MAX, max = -FLT_MAX;
    for (let j = 0; j < QK; j++) {
      const v = x[xo + j]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const d = f(f(max - min) / 15);
    const id = d !== 0 ? f(1 / d) : 0;
    putF16(y, yo, d);
    putF16(y, yo + 2, min);
    for (let j = 0; j < 16; j++) {
      const x0 = f(f(x[xo + j]! - min) * id);
      const x1 = f(f(x[xo + 16 + j]! - min) * id);
      const q0 = Math.min(15, trunc(f(x0 + 0.5)));
      const q1 = Math.min(15, trunc(f(x1 + 0.5)));
      y[yo + 4 + j] = q0 | (q1 << 4);
    }
  }
}

function quantQ5_0(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q5_0', n, QK);
  for (let i = 0; i < nb; i++, xo += QK, yo += Q5_0_BYTES) {
    let amax = 0, max = 0;
    for (let j = 0; j < QK; j++) {
      const v = x[xo + j]!;
      if (amax < Math.abs(v)) { amax = Math.abs(v); max = v; }
    }
    const d = f(max / -16);
    const id = d !== 0 ? f(1 / d) : 0;
    putF16(y, yo, d);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      const x0 = f(x[xo + j]! * id);
      const x1 = f(x[xo + 16 + j]! * id);
      const q0 = Math.min(31, trunc(f(x0 + 16.5)));
      const q1 = Math.min(31, trunc(f(x1 + 16.5)));
      y[yo + 6 + j] = (q0 & 0xf) | ((q1 & 0xf) << 4);
      qh |= ((q0 >> 4) & 1) << j;
      qh |= ((q1 >> 4) & 1) << (j + 16);
    }
    writeU32(y, yo + 2, qh);
  }
}

function quantQ5_1(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q5_1', n, QK);
  for (let i = 0; i < nb; i++, xo += QK, yo += Q5_1_BYTES) {
    let min = FLT_MAX, max = -FLT_MAX;
    for (let j = 0; j < QK; j++) {
      const v = x[xo + j]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const d = f(f(max - min) / 31);
    const id = d !== 0 ? f(1 / d) : 0;
    putF16(y, yo, d);
    putF16(y, yo + 2, min);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      const x0 = f(f(x[xo + j]! - min) * id);
      const x1 = f(f(x[xo + 16 + j]! - min) * id);
      const q0 = trunc(f(x0 + 0.5)) & 0xff;
      const q1 = trunc(f(x1 + 0.5)) & 0xff;
      y[yo + 8 + j] = (q0 & 0xf) | ((q1 & 0xf) << 4);
      qh |= ((q0 >> 4) & 1) << j;
      qh |= ((q1 >> 4) & 1) << (j + 16);
    }
    writeU32(y, yo + 4, qh);
  }
}

// ---------------------------------------------------------------- K-quant helpers

const L = new Uint8Array(QK_K); // chosen levels (unsigned, biased) for one super-block
const Lsigned = new Int8Array(QK_K); // signed levels for Q3_K/Q6_K searches
const Laux = new Uint8Array(32);
const weights = new Float32Array(32);
const scales = new Float32Array(16);
const mins = new Float32Array(16);

/** Second return value of makeQkx2Quants (the offset m, so that x ≈ scale*L - m). */
let qkx2Min = 0;

/**
 * make_qkx2_quants: fit x[i] ≈ scale*L[i] + min (min <= 0, L in 0..nmax) minimizing the weighted
 * error; start from the min/max grid and try nstep+1 rescaled grids, re-solving scale and min by
 * least squares each time. Writes L[lo..lo+n), returns scale, leaves -min in qkx2Min.
 */
function makeQkx2Quants(n: number, nmax: number, x: Float32Array, xo: number, w: Float32Array, lo: number,
  rmin: number, rdelta: number, nstep: number, useMad: boolean): number {
  let min = x[xo]!, max = x[xo]!;
  let sumW = w[0]!;
  let sumX = f(sumW * x[xo]!);
  for (let i = 1; i < n; i++) {
    const xi = x[xo + i]!;
    if (xi < min) min = xi;
    if (xi > max) max = xi;
    sumW = f(sumW + w[i]!);
    sumX = f(sumX + f(w[i]! * xi));
  }
  if (min > 0) min = 0;
  if (max === min) {
    L.fill(0, lo, lo + n);
    qkx2Min = -min;
    return 0;
  }
  let iscale = f(nmax / f(max - min));
  let scale = f(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < n; i++) {
    const l = clamp(nearestInt(f(iscale * f(x[xo + i]! - min))), 0, nmax);
    L[lo + i] = l;
    let diff = f(f(f(scale * l) + min) - x[xo + i]!);
    diff = useMad ? Math.abs(diff) : f(diff * diff);
    bestError = f(bestError + f(w[i]! * diff));
  }
  if (nstep < 1) {
    qkx2Min = -min;
    return scale;
  }
  for (let is = 0; is <= nstep; is++) {
    // `min` may have been replaced by a better fit in an earlier step; ggml keeps using the
    // updated value here (both in the range and in x - min), so we do too.
    iscale = f(f(f(rmin + f(rdelta * is)) + nmax) / f(max - min));
    let sumL = 0, sumL2 = 0, sumXL = 0;
    for (let i = 0; i < n; i++) {
      const l = clamp(nearestInt(f(iscale * f(x[xo + i]! - min))), 0, nmax);
      Laux[i] = l;
      const wl = f(w[i]! * l);
      sumL = f(sumL + wl);
      sumL2 = f(sumL2 + f(wl * l));
      sumXL = f(sumXL + f(wl * x[xo + i]!));
    }
    const D = f(f(sumW * sumL2) - f(sumL * sumL));
    if (D > 0) {
      let thisScale = f(f(f(sumW * sumXL) - f(sumX * sumL)) / D);
      let thisMin = f(f(f(sumL2 * sumX) - f(sumL * sumXL)) / D);
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = f(sumXL / sumL2);
      }
      let curError = 0;
      for (let i = 0; i < n; i++) {
        let diff = f(f(f(thisScale * Laux[i]!) + thisMin) - x[xo + i]!);
        diff = useMad ? Math.abs(diff) : f(diff * diff);
        curError = f(curError + f(w[i]! * diff));
      }
      if (curError < bestError) {
        for (let i = 0; i < n; i++) L[lo + i] = Laux[i]!;
        bestError = curError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  qkx2Min = -min;
  return scale;
}

/**
 * make_qx_quants with rmse_type 1 and no importance weights (weights x^2): symmetric levels
 * in [-nmax, nmax-1]; tries 18 rescaled grids around nmax/max and keeps the best
 * least-squares scale. Writes L[lo..) = level + nmax (unsigned), returns the scale.
 */
function makeQxQuants(n: number, nmax: number, x: Float32Array, xo: number, lo: number): number {
  let max = 0, amax = 0;
  for (let i = 0; i < n; i++) {
    const ax = Math.abs(x[xo + i]!);
    if (ax > amax) { amax = ax; max = x[xo + i]!; }
  }
  if (amax < GROUP_MAX_EPS) {
    L.fill(0, lo, lo + n);
    return 0;
  }
  let iscale = f(-nmax / max);
  let sumlx = 0, suml2 = 0;
  for (let i = 0; i < n; i++) {
    const xi = x[xo + i]!;
    const l = clamp(nearestInt(f(iscale * xi)), -nmax, nmax - 1);
    L[lo + i] = l + nmax;
    const w = f(xi * xi);
    sumlx = f(sumlx + f(f(w * xi) * l));
    suml2 = f(suml2 + f(f(w * l) * l));
  }
  let scale = suml2 !== 0 ? f(sumlx / suml2) : 0;
  let best = f(scale * sumlx);
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    iscale = f(-f(nmax + f(F_0_1 * is)) / max);
    sumlx = 0;
    suml2 = 0;
    for (let i = 0; i < n; i++) {
      const xi = x[xo + i]!;
      const l = clamp(nearestInt(f(iscale * xi)), -nmax, nmax - 1);
      const w = f(xi * xi);
      sumlx = f(sumlx + f(f(w * xi) * l));
      suml2 = f(suml2 + f(f(w * l) * l));
    }
    if (suml2 > 0 && f(sumlx * sumlx) > f(best * suml2)) {
      for (let i = 0; i < n; i++) {
        L[lo + i] = nmax + clamp(nearestInt(f(iscale * x[xo + i]!)), -nmax, nmax - 1);
      }
      scale = f(sumlx / suml2);
      best = f(scale * sumlx);
    }
  }
  return scale;
}

/**
 * make_q3_quants with do_rmse: levels in [-nmax, nmax-1] weighted by x^2, then up to 5 passes
 * of coordinate descent moving one level at a time while the fit improves.
 * Writes L[lo..) = level + nmax, returns the scale.
 */
function makeQ3Quants(n: number, nmax: number, x: Float32Array, xo: number, lo: number): number {
  let max = 0, amax = 0;
  for (let i = 0; i < n; i++) {
    const ax = Math.abs(x[xo + i]!);
    if (ax > amax) { amax = ax; max = x[xo + i]!; }
  }
  if (amax < GROUP_MAX_EPS) {
    L.fill(0, lo, lo + n);
    return 0;
  }
  const iscale = f(-nmax / max);
  let sumlx = 0, suml2 = 0;
  for (let i = 0; i < n; i++) {
    const xi = x[xo + i]!;
    const l = clamp(nearestInt(f(iscale * xi)), -nmax, nmax - 1);
    Lsigned[lo + i] = l;
    const w = f(xi * xi);
    sumlx = f(sumlx + f(f(w * xi) * l));
    suml2 = f(suml2 + f(f(w * l) * l));
  }
  for (let itry = 0; itry < 5; itry++) {
    let nChanged = 0;
    for (let i = 0; i < n; i++) {
      const xi = x[xo + i]!;
      const li = Lsigned[lo + i]!;
      const w = f(xi * xi);
      let slx = f(sumlx - f(f(w * xi) * li));
      if (slx > 0) {
        let sl2 = f(suml2 - f(f(w * li) * li));
        const newL = clamp(nearestInt(f(f(xi * sl2) / slx)), -nmax, nmax - 1);
        if (newL !== li) {
          slx = f(slx + f(f(w * xi) * newL));
          sl2 = f(sl2 + f(f(w * newL) * newL));
          if (sl2 > 0 && f(f(slx * slx) * suml2) > f(f(sumlx * sumlx) * sl2)) {
            Lsigned[lo + i] = newL;
            sumlx = slx;
            suml2 = sl2;
            nChanged++;
          }
        }
      }
    }
    if (nChanged === 0) break;
  }
  for (let i = 0; i < n; i++) L[lo + i] = Lsigned[lo + i]! + nmax;
  return suml2 > 0 ? f(sumlx / suml2) : 0;
}

// ---------------------------------------------------------------- K-quants

function quantQ2_K(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q2_K', n, QK_K);
  for (let i = 0; i < nb; i++, xo += QK_K, yo += Q2_K_BYTES) {
    // 16 groups of 16 values, each fitted as scale*L - min with L in 0..3 (weights |x|).
    let maxScale = 0, maxMin = 0;
    for (let j = 0; j < 16; j++) {
      for (let l = 0; l < 16; l++) weights[l] = Math.abs(x[xo + 16 * j + l]!);
      scales[j] = makeQkx2Quants(16, 3, x, xo + 16 * j, weights, 16 * j, -0.5, F_0_1, 15, true);
      mins[j] = qkx2Min;
      if (scales[j]! > maxScale) maxScale = scales[j]!;
      if (mins[j]! > maxMin) maxMin = mins[j]!;
    }
    // Group scales and mins are themselves quantized to 4 bits against the block maxima.
    let d = 0, dmin = 0;
    if (maxScale > 0) {
      const iscale = f(15 / maxScale);
      for (let j = 0; j < 16; j++) y[yo + Q2K_SCALES + j] = nearestInt(f(iscale * scales[j]!)) & 0xff;
      d = putF16(y, yo + Q2K_D, f(maxScale / 15));
    } else {
      y.fill(0, yo + Q2K_SCALES, yo + Q2K_SCALES + 16);
      d = putF16(y, yo + Q2K_D, 0);
    }
    if (maxMin > 0) {
      const iscale = f(15 / maxMin);
      for (let j = 0; j < 16; j++) y[yo + Q2K_SCALES + j] |= nearestInt(f(iscale * mins[j]!)) << 4;
      dmin = putF16(y, yo + Q2K_DMIN, f(maxMin / 15));
    } else {
      dmin = putF16(y, yo + Q2K_DMIN, 0);
    }
    // Re-pick every level against the scales as they will actually be decoded.
    for (let j = 0; j < 16; j++) {
      const sc = y[yo + Q2K_SCALES + j]!;
      const dl = f(d * (sc & 0xf));
      if (dl === 0) continue;
      const dm = f(dmin * (sc >> 4));
      for (let ii = 0; ii < 16; ii++) {
        L[16 * j + ii] = clamp(nearestInt(f(f(x[xo + 16 * j + ii]! + dm) / dl)), 0, 3);
      }
    }
    packQs2(y, yo + Q2K_QS);
  }
}

/** Pack 2-bit levels L[0..256): byte l of each 32-byte half holds values l, l+32, l+64, l+96. */
function packQs2(y: Uint8Array, qo: number): void {
  for (let j = 0; j < QK_K; j += 128) {
    for (let l = 0; l < 32; l++) {
      y[qo + j / 4 + l] = (L[j + l]! & 3) | ((L[j + l + 32]! & 3) << 2) | ((L[j + l + 64]! & 3) << 4) | ((L[j + l + 96]! & 3) << 6);
    }
  }
}

function quantQ3_K(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q3_K', n, QK_K);
  for (let i = 0; i < nb; i++, xo += QK_K, yo += Q3_K_BYTES) {
    let maxScale = 0, amax = 0;
    for (let j = 0; j < 16; j++) {
      scales[j] = makeQ3Quants(16, 4, x, xo + 16 * j, 16 * j);
      const s = Math.abs(scales[j]!);
      if (s > amax) { amax = s; maxScale = scales[j]!; }
    }
    // 16 signed 6-bit group scales (biased by 32) against the largest one.
    const so = yo + Q3K_SCALES;
    y.fill(0, so, so + 12);
    let d: number;
    if (maxScale !== 0) {
      const iscale = f(-32 / maxScale);
      for (let j = 0; j < 16; j++) {
        let l = clamp(nearestInt(f(iscale * scales[j]!)), -32, 31) + 32;
        if (j < 8) y[so + j] = l & 0xf;
        else y[so + j - 8] |= (l & 0xf) << 4;
        l >>= 4;
        y[so + (j % 4) + 8] |= l << (2 * (j >> 2));
      }
      d = putF16(y, yo + Q3K_D, f(1 / iscale));
    } else {
      d = putF16(y, yo + Q3K_D, 0);
    }
    for (let j = 0; j < 16; j++) {
      const dl = f(d * scaleQ3K(j, y, so));
      if (dl === 0) continue;
      for (let ii = 0; ii < 16; ii++) {
        L[16 * j + ii] = clamp(nearestInt(f(x[xo + 16 * j + ii]! / dl)), -4, 3) + 4;
      }
    }
    // The 3rd bit goes to hmask: bit b of byte m for value 32*b + m.
    const ho = yo + Q3K_HMASK;
    y.fill(0, ho, ho + 32);
    for (let j = 0; j < QK_K; j++) {
      if (L[j]! > 3) {
        y[ho + (j & 31)] |= 1 << (j >> 5);
        L[j] = L[j]! - 4;
      }
    }
    packQs2(y, yo + Q3K_QS);
  }
}

/**
 * Shared body of Q4_K and Q5_K: 8 groups of 32 fitted as scale*L - min (weights |x| + rms),
 * then 6-bit group scales/mins packed as scaleMinK4 reads them, then levels re-picked.
 */
function quantScaleMinK(x: Float32Array, xo: number, y: Uint8Array, yo: number, nmax: number, rmin: number, nstep: number,
  dOff: number, dminOff: number, scOff: number): void {
  let maxScale = 0, maxMin = 0;
  for (let j = 0; j < 8; j++) {
    let sumX2 = 0;
    for (let l = 0; l < 32; l++) { const v = x[xo + 32 * j + l]!; sumX2 = f(sumX2 + f(v * v)); }
    const avX = f(Math.sqrt(f(sumX2 / 32)));
    for (let l = 0; l < 32; l++) weights[l] = f(avX + Math.abs(x[xo + 32 * j + l]!));
    scales[j] = makeQkx2Quants(32, nmax, x, xo + 32 * j, weights, 32 * j, rmin, F_0_1, nstep, false);
    mins[j] = qkx2Min;
    if (scales[j]! > maxScale) maxScale = scales[j]!;
    if (mins[j]! > maxMin) maxMin = mins[j]!;
  }
  const invScale = maxScale > 0 ? f(63 / maxScale) : 0;
  const invMin = maxMin > 0 ? f(63 / maxMin) : 0;
  const so = yo + scOff;
  for (let j = 0; j < 8; j++) {
    const ls = Math.min(63, nearestInt(f(invScale * scales[j]!)) & 0xff);
    const lm = Math.min(63, nearestInt(f(invMin * mins[j]!)) & 0xff);
    if (j < 4) {
      y[so + j] = ls;
      y[so + j + 4] = lm;
    } else {
      y[so + j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
      y[so + j - 4] |= (ls >> 4) << 6;
      y[so + j] |= (lm >> 4) << 6;
    }
  }
  const d = putF16(y, yo + dOff, f(maxScale / 63));
  const dmin = putF16(y, yo + dminOff, f(maxMin / 63));
  for (let j = 0; j < 8; j++) {
    const sm = scaleMinK4(j, y, so);
    const dl = f(d * (sm & 0xff));
    if (dl === 0) continue;
    const dm = f(dmin * (sm >> 8));
    for (let ii = 0; ii < 32; ii++) {
      L[32 * j + ii] = clamp(nearestInt(f(f(x[xo + 32 * j + ii]! + dm) / dl)), 0, nmax);
    }
  }
}

function quantQ4_K(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q4_K', n, QK_K);
  for (let i = 0; i < nb; i++, xo += QK_K, yo += Q4_K_BYTES) {
    quantScaleMinK(x, xo, y, yo, 15, -1, 20, Q4K_D, Q4K_DMIN, Q4K_SCALES);
    // Each 32-byte chunk: low nibbles = values 64c..64c+31, high nibbles = the next 32.
    for (let c = 0; c < 4; c++) {
      for (let l = 0; l < 32; l++) y[yo + Q4K_QS + 32 * c + l] = L[64 * c + l]! | (L[64 * c + 32 + l]! << 4);
    }
  }
}

function quantQ5_K(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q5_K', n, QK_K);
  for (let i = 0; i < nb; i++, xo += QK_K, yo += Q5_K_BYTES) {
    quantScaleMinK(x, xo, y, yo, 31, -0.5, 15, Q5K_D, Q5K_DMIN, Q5K_SCALES);
    const qh = yo + Q5K_QH;
    y.fill(0, qh, qh + 32);
    for (let c = 0; c < 4; c++) {
      const m1 = 1 << (2 * c), m2 = 2 << (2 * c);
      for (let j = 0; j < 32; j++) {
        let l1 = L[64 * c + j]!;
        if (l1 > 15) { l1 -= 16; y[qh + j] |= m1; }
        let l2 = L[64 * c + 32 + j]!;
        if (l2 > 15) { l2 -= 16; y[qh + j] |= m2; }
        y[yo + Q5K_QS + 32 * c + j] = l1 | (l2 << 4);
      }
    }
  }
}

function quantQ6_K(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q6_K', n, QK_K);
  for (let i = 0; i < nb; i++, xo += QK_K, yo += Q6_K_BYTES) {
    let maxScale = 0, maxAbsScale = 0;
    for (let ib = 0; ib < 16; ib++) {
      const s = makeQxQuants(16, 32, x, xo + 16 * ib, 16 * ib);
      scales[ib] = s;
      if (Math.abs(s) > maxAbsScale) { maxAbsScale = Math.abs(s); maxScale = s; }
    }
    if (maxAbsScale < GROUP_MAX_EPS) {
      y.fill(0, yo, yo + Q6_K_BYTES);
      continue;
    }
    // int8 group scales against the largest (signed) one, which maps to -128.
    const iscale = f(-128 / maxScale);
    const d = putF16(y, yo + Q6K_D, f(1 / iscale));
    for (let ib = 0; ib < 16; ib++) y[yo + Q6K_SCALES + ib] = Math.min(127, nearestInt(f(iscale * scales[ib]!))) & 0xff;
    for (let j = 0; j < 16; j++) {
      const dl = f(d * ((y[yo + Q6K_SCALES + j]! << 24) >> 24));
      if (dl === 0) continue;
      for (let ii = 0; ii < 16; ii++) {
        L[16 * j + ii] = clamp(nearestInt(f(x[xo + 16 * j + ii]! / dl)), -32, 31) + 32;
      }
    }
    for (let half = 0; half < 2; half++) {
      const ql = yo + Q6K_QL + 64 * half, qh = yo + Q6K_QH + 32 * half, b = 128 * half;
      for (let l = 0; l < 32; l++) {
        const a0 = L[b + l]!, a1 = L[b + l + 32]!, a2 = L[b + l + 64]!, a3 = L[b + l + 96]!;
        y[ql + l] = (a0 & 0xf) | ((a2 & 0xf) << 4);
        y[ql + l + 32] = (a1 & 0xf) | ((a3 & 0xf) << 4);
        y[qh + l] = (a0 >> 4) | ((a1 >> 4) << 2) | ((a2 >> 4) << 4) | ((a3 >> 4) << 6);
      }
    }
  }
}

// ---------------------------------------------------------------- IQ4_NL

/** Index of the level nearest x in sorted `KVALUES_IQ4NL` (upper one on an exact midpoint). */
function bestIndexIQ4(x: number): number {
  const x2 = x + x; // exact; comparing 2x with the sum of neighbours avoids rounding midpoints
  let idx = 0;
  for (let step = 8; step > 0; step >>= 1) {
    const j = idx + step;
    if (x2 >= KVALUES_IQ4NL[j - 1]! + KVALUES_IQ4NL[j]!) idx = j;
  }
  return idx;
}

/**
 * Fit one group of 32 values to the IQ4 levels: start from the scale max/127 (sign as ggml picks it
 * from ntry), refit by weighted least squares (weights x^2), then if ntry > 0 also try the 2*ntry+1
 * scales (itry - 127)/max and keep the best fit. Writes the levels of the first pass to L[lo..) and
 * returns the group scale.
 */
function fitIQ4Group(x: Float32Array, xo: number, lo: number, ntry: number): number {
  let amax = 0, max = 0;
  for (let j = 0; j < 32; j++) {
    const ax = Math.abs(x[xo + j]!);
    if (ax > amax) { amax = ax; max = x[xo + j]!; }
  }
  if (amax < GROUP_MAX_EPS) {
    L.fill(0, lo, lo + 32);
    return 0;
  }
  const v0 = KVALUES_IQ4NL[0]!;
  let d = ntry > 0 ? f(-max / v0) : f(max / v0);
  let id = f(1 / d);
  let sumqx = 0, sumq2 = 0;
  for (let j = 0; j < 32; j++) {
    const xj = x[xo + j]!;
    const l = bestIndexIQ4(f(id * xj));
    L[lo + j] = l;
    const q = KVALUES_IQ4NL[l]!;
    const wq = f(f(xj * xj) * q);
    sumqx = f(sumqx + f(wq * xj));
    sumq2 = f(sumq2 + f(wq * q));
  }
  d = sumq2 > 0 ? f(sumqx / sumq2) : 0;
  let best = f(d * sumqx);
  for (let itry = -ntry; itry <= ntry; itry++) {
    id = f((itry + v0) / max);
    sumqx = 0;
    sumq2 = 0;
    for (let j = 0; j < 32; j++) {
      const xj = x[xo + j]!;
      const q = KVALUES_IQ4NL[bestIndexIQ4(f(id * xj))]!;
      const wq = f(f(xj * xj) * q);
      sumqx = f(sumqx + f(wq * xj));
      sumq2 = f(sumq2 + f(wq * q));
    }
    if (sumq2 > 0 && f(sumqx * sumqx) > f(best * sumq2)) {
      d = f(sumqx / sumq2);
      best = f(d * sumqx);
    }
  }
  return d;
}

/** Pack IQ4 levels L[0..n): per 32 values, 16 bytes of low nibbles (first 16) | high (next 16). */
function packIQ4(y: Uint8Array, qo: number, n: number): void {
  for (let i = 0; i < n / 32; i++) {
    for (let j = 0; j < 16; j++) y[qo + 16 * i + j] = L[32 * i + j]! | (L[32 * i + 16 + j]! << 4);
  }
}

/**
 * quantize_row_iq4_nl_ref: one group of 32 per block, one pass (ntry = -1, no scale search).
 * (ggml's quantize_iq4_nl, which llama-quantize calls, searches with ntry = 7 instead, so files it
 * writes may differ from ours in a few scales and levels; both decode the same way.)
 */
function quantIQ4_NL(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('IQ4_NL', n, QK);
  for (let i = 0; i < nb; i++, xo += QK, yo += IQ4_NL_BYTES) {
    putF16(y, yo, fitIQ4Group(x, xo, 0, -1));
    packIQ4(y, yo + 2, QK);
  }
}

/**
 * quantize_row_iq4_xs_ref (= quantize_iq4_xs without weights): each group of 32 fitted with the
 * scale search (ntry = 7), then the 8 group scales quantized to 6 bits against the largest
 * (biased by 32), and the levels re-picked for the scale each group will decode with.
 */
function quantIQ4_XS(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('IQ4_XS', n, QK_K);
  for (let i = 0; i < nb; i++, xo += QK_K, yo += IQ4_XS_BYTES) {
    let maxScale = 0, amaxScale = 0;
    for (let ib = 0; ib < 8; ib++) {
      const d = fitIQ4Group(x, xo + 32 * ib, 32 * ib, 7);
      scales[ib] = d;
      if (Math.abs(d) > amaxScale) { amaxScale = Math.abs(d); maxScale = d; }
    }
    const d = f(-maxScale / 32); // -0 when every group is zero; ggml stores that sign too
    putF16(y, yo + IQ4XS_D, d);
    const id = d !== 0 ? f(1 / d) : 0;
    let scalesH = 0;
    for (let ib = 0; ib < 8; ib++) {
      const l = clamp(nearestInt(f(id * scales[ib]!)), -32, 31);
      // Levels are re-picked against the unrounded f32 d * l, as ggml does.
      const dl = f(d * l);
      const idl = dl !== 0 ? f(1 / dl) : 0;
      for (let j = 0; j < 32; j++) L[32 * ib + j] = bestIndexIQ4(f(idl * x[xo + 32 * ib + j]!));
      const lb = l + 32;
      if ((ib & 1) === 0) y[yo + IQ4XS_SCALES_L + (ib >> 1)] = lb & 0xf;
      else y[yo + IQ4XS_SCALES_L + (ib >> 1)] |= (lb & 0xf) << 4;
      scalesH |= (lb >> 4) << (2 * ib);
    }
    writeU16(y, yo + IQ4XS_SCALES_H, scalesH);
    packIQ4(y, yo + IQ4XS_QS, QK_K);
  }
}

// ---------------------------------------------------------------- float types

export type { QuantizeFn } from './activations.js';

const table = new Map<number, QuantizeFn>([
  [GgmlType.F32, quantF32],
  [GgmlType.F16, quantF16],
  [GgmlType.BF16, quantBF16],
  [GgmlType.Q4_0, quantQ4_0],
  [GgmlType.Q4_1, quantQ4_1],
  [GgmlType.Q5_0, quantQ5_0],
  [GgmlType.Q5_1, quantQ5_1],
  [GgmlType.Q8_0, quantQ8_0],
  [GgmlType.Q8_1, quantQ8_1],
  [GgmlType.Q8_K, quantQ8_K],
  [GgmlType.Q2_K, quantQ2_K],
  [GgmlType.Q3_K, quantQ3_K],
  [GgmlType.Q4_K, quantQ4_K],
  [GgmlType.Q5_K, quantQ5_K],
  [GgmlType.Q6_K, quantQ6_K],
  [GgmlType.IQ4_NL, quantIQ4_NL],
  [GgmlType.IQ4_XS, quantIQ4_XS],
]);

/** Whether quantizeRow can produce this ggml type id. */
export function isQuantizableType(type: number): boolean {
  return table.has(type);
}

/** The specialised row encoder for a type. */
export function quantizer(type: number): QuantizeFn {
  const fn = table.get(type);
  if (!fn) throw new Error(`quantize: unsupported ggml type ${ggmlTypeName(type)} (${type})`);
  return fn;
}

/**
 * Encode src[srcOffset..srcOffset+n) as `type` into dst starting at byte dstOffset
 * (n a multiple of the block size; dst may be at any alignment).
 */
export function quantizeRow(type: number, src: Float32Array, srcOffset: number, dst: Uint8Array, dstOffset: number, n: number): void {
  quantizer(type)(src, srcOffset, dst, dstOffset, n);
}
