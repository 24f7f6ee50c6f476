// Every CPU kernel against a plain-TS reference, on awkward shapes, with 1 and 2 threads.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { GgmlType, ggmlTypeName } from '../../../src/gguf/ggml-types.js';
import { createCpuRuntime, activationTypeFor, CpuLayout, type CpuRuntime } from '../../../src/backends/cpu/index.js';
import { BLOCK, randomWeights, rng } from './ref.js';
import { dequantizeRow, f32ToF16, quantizeActivations, vecDot, vecDotType } from '../../../src/quant/index.js';
import { attention as refAttention, flashAttention as refFlash, flashWorkspace, softcap as refSoftcap } from '../../../src/backends/reference/ops.js';
import { ropeCacheRow, ropeThetaScale } from '../../../src/backends/rope-cache.js';

function quantizeAct(vt: number, x: Float32Array, n: number): Uint8Array {
  const out = new Uint8Array((n / BLOCK[vt]![0]) * BLOCK[vt]![1]);
  quantizeActivations(vt, x, 0, out, 0, n);
  return out;
}
function dequantize(t: number, src: Uint8Array, off: number, n: number): Float32Array {
  const y = new Float32Array(n);
  dequantizeRow(t, src, off, y, 0, n);
  return y;
}

function randomF32(n: number, rnd: () => number, scale = 1): Float32Array {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = (rnd() * 2 - 1) * scale;
  return x;
}
function put(rt: CpuRuntime, data: Float32Array | Uint8Array | Uint16Array): number {
  const p = rt.alloc(data.byteLength, 64);
  rt.u8(p, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return p;
}
function close(got: ArrayLike<number>, want: ArrayLike<number>, tol: (i: number) => number, what: string): void {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs(got[i]! - want[i]!);
    if (!(d <= tol(i))) assert.fail(`${what}: [${i}] got ${got[i]} want ${want[i]} (|diff| ${d} > ${tol(i)})`);
  }
}

const TYPES = [GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1, GgmlType.Q8_0, GgmlType.Q2_K, GgmlType.Q3_K,
  GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.IQ4_NL, GgmlType.IQ4_XS, GgmlType.F16, GgmlType.BF16, GgmlType.F32];

for (const threads of [1, 2]) {
  describe(`cpu kernels, ${threads} thread(s)`, () => {
    let rt: CpuRuntime;
    before(async () => { rt = await createCpuRuntime({ threads, spin: 2000, parallelMinWork: 0 }); });
    after(async () => { await rt.close(); });

    it('quantizes activations to Q8_0, Q8_1, Q8_K exactly as ggml', () => {
      const rnd = rng(1);
      for (const vt of [GgmlType.Q8_0, GgmlType.Q8_1, GgmlType.Q8_K]) {
        const cols = vt === GgmlType.Q8_K ? 768 : 96, rows = 5;
        const x = randomF32(cols * rows, rnd, 3);
        x.fill(0, cols, cols + BLOCK[vt]![0]); // an all-zero block
        x[3] = -3.5; x[7] = 3.5; // equal magnitudes: the first decides Q8_K's sign
        const m = rt.mark();
        const xp = put(rt, x);
        const bytes = (cols / BLOCK[vt]![0]) * BLOCK[vt]![1];
        const yp = rt.alloc(bytes * rows);
        rt.quantize(vt, xp, cols, rows, yp);
        for (let r = 0; r < rows; r++) {
          const want = quantizeAct(vt, x.subarray(r * cols, (r + 1) * cols), cols);
          assert.deepEqual(rt.u8(yp + r * bytes, bytes), want, `${ggmlTypeName(vt)} row ${r}`);
        }
        rt.release(m);
      }
    });

    for (const wt of TYPES) {
      it(`matmul ${ggmlTypeName(wt)} x ${ggmlTypeName(activationTypeFor(wt))}`, () => {
        const rnd = rng(100 + wt);
        const bs = BLOCK[wt]![0];
        const cols = bs === 256 ? 768 : bs === 32 ? 224 : 37;
        const rows = 7;
        for (const nTok of [1, 3, 5]) {
          const m = rt.mark();
          const w = randomWeights(wt, rows, cols, rnd);
          const x = randomF32(cols * nTok, rnd);
          const wp = put(rt, w), xp = put(rt, x), yp = rt.alloc(rows * nTok * 4);
          rt.matmul(wt, wp, rows, cols, xp, nTok, yp);
          const got = rt.f32(yp, rows * nTok).slice();
          const vt = activationTypeFor(wt);
          assert.equal(vt, vecDotType(wt));
          const want = new Float64Array(rows * nTok), tol = new Float64Array(rows * nTok);
          const wrow = w.length / rows;
          for (let t = 0; t < nTok; t++) {
            const xt = x.subarray(t * cols, (t + 1) * cols);
            const q = quantizeAct(vt, xt, cols);
            const a = dequantize(vt, q, 0, cols);
            for (let r = 0; r < rows; r++) {
              // oracle: ggml's vec_dot (src/quant); tolerance from the magnitude of the terms (float order differs)
              const wd = dequantize(wt, w, r * wrow, cols);
              let sa = 0;
              for (let j = 0; j < cols; j++) sa += Math.abs(wd[j]! * a[j]!);
              want[t * rows + r] = vecDot(wt, cols, w, r * wrow, q, 0);
              tol[t * rows + r] = 1e-5 * sa + 1e-7;
            }
          }
          close(got, want, (i) => tol[i]!, `${ggmlTypeName(wt)} nTok=${nTok}`);
          rt.release(m);
        }
      });
    }

    it('matmul shape sweep: rows 1..19, 1..5 tokens, several row lengths, every type', () => {
      const rnd = rng(77);
      for (const wt of TYPES) {
        const base = wt;
        const bs = BLOCK[base]![0];
        for (let trial = 0; trial < 3; trial++) {
          const rows = 1 + Math.floor(rnd() * 19), nTok = 1 + Math.floor(rnd() * 5);
          const nbk = 1 + Math.floor(rnd() * (bs === 1 ? 70 : bs === 32 ? 12 : 3));
          const cols = nbk * bs;
          const m = rt.mark();
          const w = randomWeights(base, rows, cols, rnd), x = randomF32(cols * nTok, rnd);
          const wp = put(rt, w), xp = put(rt, x), yp = rt.alloc(rows * nTok * 4);
          const lt = wt;
          rt.matmul(lt, wp, rows, cols, xp, nTok, yp);
          const vt = activationTypeFor(base), wrow = w.length / rows;
          for (let t = 0; t < nTok; t++) {
            const q = quantizeAct(vt, x.subarray(t * cols, (t + 1) * cols), cols);
            const a = dequantize(vt, q, 0, cols);
            for (let r = 0; r < rows; r++) {
              const wd = dequantize(base, w, r * wrow, cols);
              let sa = 0;
              for (let j = 0; j < cols; j++) sa += Math.abs(wd[j]! * a[j]!);
              const want = vecDot(base, cols, w, r * wrow, q, 0), got = rt.f32(yp + (t * rows + r) * 4, 1)[0]!;
              if (!(Math.abs(got - want) <= 1e-5 * sa + 1e-7)) assert.fail(`type ${lt} rows ${rows} cols ${cols} nTok ${nTok}: [${t}][${r}] got ${got} want ${want}`);
            }
          }
          rt.release(m);
        }
      }
    });

    it('matmul with strided activations and outputs', () => {
      const rnd = rng(4), rows = 5, cols = 256, nTok = 3;
      for (const wt of [GgmlType.Q4_K, GgmlType.F32, GgmlType.Q8_0]) {
        const m = rt.mark();
        const w = randomWeights(wt, rows, cols, rnd), x = randomF32(cols * nTok, rnd);
        const wp = put(rt, w), xp = put(rt, x), y0 = rt.alloc(rows * nTok * 4);
        rt.matmul(wt, wp, rows, cols, xp, nTok, y0);
        // the same activations 2 rows apart, outputs 3 rows apart
        const xs = rt.alloc(cols * nTok * 8), ys = rt.alloc(rows * nTok * 12);
        for (let t = 0; t < nTok; t++) rt.f32(xs + t * cols * 8, cols).set(x.subarray(t * cols, (t + 1) * cols));
        rt.matmul(wt, wp, rows, cols, xs, nTok, ys, cols * 8, rows * 12);
        for (let t = 0; t < nTok; t++) assert.deepEqual(rt.f32(ys + t * rows * 12, rows), rt.f32(y0 + t * rows * 4, rows), ggmlTypeName(wt));
        rt.release(m);
      }
    });

    it('4-row layouts: Q4_0r4 equals Q4_0 bit for bit, Q8_0r4 (free order) equals Q8_0 to rounding', () => {
      const rnd = rng(5), rows = 8, cols = 512;
      for (const wt of [GgmlType.Q4_0, GgmlType.Q8_0]) {
        for (const nTok of [1, 2, 5]) {
          const m = rt.mark();
          const w = randomWeights(wt, rows, cols, rnd), x = randomF32(cols * nTok, rnd);
          const wp = put(rt, w), xp = put(rt, x), y0 = rt.alloc(rows * nTok * 4), y1 = rt.alloc(rows * nTok * 4);
          rt.matmul(wt, wp, rows, cols, xp, nTok, y0);
          const lt = rt.repackRows4(wp, rows, cols, wt);
          assert.equal(lt, wt === GgmlType.Q4_0 ? CpuLayout.Q4_0r4 : CpuLayout.Q8_0r4);
          assert.notDeepEqual(rt.u8(wp, w.length), w);
          rt.matmul(lt, wp, rows, cols, xp, nTok, y1);
          const want = rt.f32(y0, rows * nTok);
          if (wt === GgmlType.Q4_0 && !rt.fastNumerics) assert.deepEqual(rt.f32(y1, rows * nTok), want, 'Q4_0r4');
          else close(rt.f32(y1, rows * nTok), want, (i) => 1e-5 * Math.abs(want[i]!) + 1e-5, ggmlTypeName(wt) + 'r4');
          rt.release(m);
        }
      }
      assert.throws(() => rt.repackRows4(0, 6, 64, GgmlType.Q4_0), (e: Error & { code?: string }) => e.code === 'BAD_SHAPE');
    });

    it('Q4_0r4 one token: groups holding a zero, subnormal or infinite scale take the general f16 path', async () => {
      // the one-token kernel converts scales with a 3-op formula that is only right for normal f16 values and
      // tests every block's scales on the way; a group with another value is recomputed the general way
      const rnd = rng(15), rows = 16;
      for (const numerics of ['exact', 'fast'] as const) {
        const r = await createCpuRuntime({ threads, numerics, spin: 2000, parallelMinWork: 0 });
        try {
          for (const cols of [512, 224]) {
            const w = randomWeights(GgmlType.Q4_0, rows, cols, rnd), nb = cols / 32, dv = new DataView(w.buffer);
            for (let b = 0; b < rows * nb; b++) dv.setUint16(b * 18, 0x2000 + (b % 97), true); // normal scales ~2^-7
            dv.setUint16((1 * nb + 3) * 18, 0x0000, true); // zero (group 0, a 4-block pass)
            dv.setUint16((6 * nb + nb - 1) * 18, 0x0013, true); // subnormal (group 1, the last block)
            dv.setUint16((10 * nb + 1) * 18, 0x8000, true); // -0 (group 2)
            const x = randomF32(cols, rnd);
            const wp = put(r, w), xp = put(r, x), y0 = r.alloc(rows * 4), y1 = r.alloc(rows * 4);
            r.matmul(GgmlType.Q4_0, wp, rows, cols, xp, 1, y0);
            const lt = r.repackRows4(wp, rows, cols, GgmlType.Q4_0);
            r.matmul(lt, wp, rows, cols, xp, 1, y1);
            const want = r.f32(y0, rows), got = r.f32(y1, rows);
            if (numerics === 'exact') assert.deepEqual(got, want, `exact, ${cols} columns`);
            else close(got, want, (i) => 1e-6 * Math.abs(want[i]!) + 1e-7, `fast, ${cols} columns`);
            // the same weights with an infinite scale: those rows are inf or nan, the other groups unchanged
            const inf = r.alloc(w.length, 64);
            r.u8(inf, w.length).set(w);
            new DataView(r.u8(inf, w.length).buffer, inf).setUint16((13 * nb + 2) * 18, 0x7c00, true);
            const y2 = r.alloc(rows * 4);
            r.matmul(r.repackRows4(inf, rows, cols, GgmlType.Q4_0), inf, rows, cols, xp, 1, y2);
            const g2 = r.f32(y2, rows);
            assert.ok(!Number.isFinite(g2[13]!), `row 13 with an infinite scale: ${g2[13]}`);
            for (let i = 0; i < 12; i++) assert.equal(g2[i], got[i], `row ${i} of the finite groups`);
          }
        } finally {
          await r.close();
        }
      }
    });

    it('getRows dequantizes table rows (plain and repacked) and copy moves bytes', () => {
      const rnd = rng(6), rows = 8, cols = 256;
      for (const wt of [GgmlType.Q4_0, GgmlType.Q6_K, GgmlType.F16, GgmlType.Q8_0]) {
        const m = rt.mark();
        const w = randomWeights(wt, rows, cols, rnd);
        const wp = put(rt, w), out = rt.alloc(3 * cols * 4);
        const ids = [5, 0, 7];
        const want = new Float32Array(3 * cols);
        ids.forEach((id, i) => dequantizeRow(wt, w, id * (w.length / rows), want, i * cols, cols));
        rt.getRows(wt, wp, cols, ids, out);
        assert.deepEqual(rt.f32(out, 3 * cols), want, ggmlTypeName(wt));
        if (wt === GgmlType.Q4_0 || wt === GgmlType.Q8_0) {
          const lt = rt.repackRows4(wp, rows, cols, wt);
          rt.f32(out, 3 * cols).fill(0);
          rt.getRows(lt, wp, cols, ids, out);
          assert.deepEqual(rt.f32(out, 3 * cols), want, ggmlTypeName(wt) + 'r4');
        }
        rt.copy(out, out + 4, 8);
        assert.deepEqual(Array.from(rt.f32(out, 3)), [want[0], want[0], want[1]]);
        rt.release(m);
      }
    });

    it('rms_norm with and without weight', () => {
      const rnd = rng(7), n = 67, rows = 5;
      const x = randomF32(n * rows, rnd, 2), w = randomF32(n, rnd);
      const m = rt.mark();
      const xp = put(rt, x), wp = put(rt, w), y1 = rt.alloc(n * rows * 4), y2 = rt.alloc(n * rows * 4);
      rt.rmsNorm(xp, y1, n, rows, 1e-6);
      rt.rmsNorm(xp, y2, n, rows, 1e-6, wp);
      for (let r = 0; r < rows; r++) {
        let ss = 0;
        for (let i = 0; i < n; i++) ss += x[r * n + i]! ** 2;
        const sc = 1 / Math.sqrt(ss / n + 1e-6);
        const want1 = Array.from({ length: n }, (_, i) => x[r * n + i]! * sc);
        close(rt.f32(y1 + r * n * 4, n), want1, (i) => 1e-6 * Math.abs(want1[i]!) + 1e-7, 'rms_norm');
        close(rt.f32(y2 + r * n * 4, n), want1.map((v, i) => v * w[i]!), () => 1e-5, 'rms_norm*w');
      }
      rt.release(m);
    });

    it('broadcast bias / weight rows', () => {
      const rnd = rng(12), n = 37, rows = 5;
      const x = randomF32(n * rows, rnd, 3), w = randomF32(n, rnd), b = randomF32(n, rnd);
      const m = rt.mark();
      const xp = put(rt, x), wp = put(rt, w), bp = put(rt, b), zp = rt.alloc(n * rows * 4);
      rt.addRow(xp, bp, zp, n, rows);
      const mz = rt.alloc(n * rows * 4);
      rt.mulRow(xp, wp, mz, n, rows);
      for (let r = 0; r < rows; r++) close(rt.f32(mz + r * n * 4, n), Float32Array.from(x.subarray(r * n, (r + 1) * n), (z, i) => z * w[i]!), () => 0, 'mul_row');
      for (let r = 0; r < rows; r++) {
        const v = Array.from(x.subarray(r * n, (r + 1) * n));
        close(rt.f32(zp + r * n * 4, n), Float32Array.from(v, (z, i) => z + b[i]!), () => 0, 'add_row');
      }
      rt.release(m);
    });

    for (const neox of [false, true]) {
      it(`rope ${neox ? 'neox' : 'normal'} (partial dims, odd heads)`, () => {
        const rnd = rng(9), nTok = 3, nHead = 3, hd = 24, nDims = 16, base = 10000;
        const x = randomF32(nTok * nHead * hd, rnd);
        const pos = [0, 7, 1234];
        const m = rt.mark();
        const xp = put(rt, x);
        rt.rope({ x: xp, nTokens: nTok, nHead, headDim: hd, nDims, positions: pos, freqBase: base, neox });
        const got = rt.f32(xp, x.length);
        const want = Float64Array.from(x);
        for (let t = 0; t < nTok; t++) for (let h = 0; h < nHead; h++) {
          const o = (t * nHead + h) * hd;
          for (let i = 0; i < nDims / 2; i++) {
            const th = pos[t]! * Math.pow(base, (-2 * i) / nDims);
            const [i0, i1] = neox ? [o + i, o + i + nDims / 2] : [o + 2 * i, o + 2 * i + 1];
            const a = x[i0]!, b = x[i1]!;
            want[i0] = a * Math.cos(th) - b * Math.sin(th);
            want[i1] = a * Math.sin(th) + b * Math.cos(th);
          }
        }
        // theta is computed in f32 as ggml does: at position 1234 that costs ~1e-4 absolute
        close(got, want, () => 5e-4, 'rope');
        rt.release(m);
      });
    }

    it('rope_cache (glibc sinf/cosf in WASM) equals the reference rope angles bit for bit, positions 0..40,009', () => {
      const nDims = 64, N = 40010;
      const m = rt.mark();
      const out = rt.alloc(N * nDims * 4), ffp = rt.alloc(nDims * 2);
      const ff = Float32Array.from({ length: nDims / 2 }, (_, j) => 1 + (j % 5) * 0.75);
      rt.f32(ffp, nDims / 2).set(ff);
      for (const [base, scale, mscale, withFf] of [[10000, 1, 1, false], [1e6, 0.25, 1.0625, true], [500000, 1 / 8, 1, false]] as const) {
        const ts = ropeThetaScale(base, nDims), fs = Math.fround(scale), ms = Math.fround(mscale);
        rt.run('rope_cache', N, 1, 1 << 30, out, nDims, ts, fs, withFf ? ffp : 0, ms);
        const got = rt.f32(out, N * nDims), want = new Float32Array(nDims);
        for (let p = 0; p < N; p += p < 2000 ? 1 : 37) {
          ropeCacheRow(p, nDims, ts, fs, withFf ? ff : null, ms, want, 0);
          for (let j = 0; j < nDims; j++) if (!Object.is(got[p * nDims + j], want[j])) assert.fail(`base ${base}: position ${p} [${j}] got ${got[p * nDims + j]} want ${want[j]}`);
        }
      }
      rt.release(m);
    });

    it('softcap (glibc tanhf in WASM) equals the reference bit for bit over every exponent', () => {
      const rnd = rng(13), n = 20000;
      const x = new Float32Array(n);
      // |x| from 2^-40 to 2^7 (every branch of tanhf/expm1f), both signs, and the special values
      for (let i = 0; i < n; i++) x[i] = (rnd() < 0.5 ? -1 : 1) * 2 ** (rnd() * 47 - 40) * (1 + rnd());
      x.set([0, -0, Infinity, -Infinity, NaN, 1e-30, 88.7, -88.7, 9, -9, 0.55, -0.55], 0);
      const m = rt.mark();
      const xp = put(rt, x), yp = rt.alloc(n * 4);
      for (const cap of [1, 30, 0.75]) {
        rt.softcap(xp, yp, n, cap);
        const want = new Float32Array(n);
        refSoftcap(x, n, cap, want);
        const got = rt.f32(yp, n);
        for (let i = 0; i < n; i++) if (!Object.is(got[i], want[i])) assert.fail(`softcap cap ${cap}: x ${x[i]} got ${got[i]} want ${want[i]}`);
      }
      rt.release(m);
    });

    it('elementwise: silu_mul, add, mul, scale, f32 -> f16', () => {
      const rnd = rng(10), n = 70001;
      const a = randomF32(n, rnd, 8), b = randomF32(n, rnd, 2);
      a[0] = 100; a[1] = -100; a[2] = 0;
      const m = rt.mark();
      const ap = put(rt, a), bp = put(rt, b), yp = rt.alloc(n * 4), hp = rt.alloc(n * 2);
      const silu = (v: number) => v / (1 + Math.exp(-v));
      const rel = (w: ArrayLike<number>, e: number) => (i: number) => e * Math.abs(w[i]!) + 1e-6;
      let want: Float64Array;
      rt.siluMul(ap, bp, yp, n); want = Float64Array.from(a, (v, i) => silu(v) * b[i]!); close(rt.f32(yp, n), want, rel(want, 1e-5), 'silu_mul');
      rt.add(ap, bp, yp, n); close(rt.f32(yp, n), Float32Array.from(a, (v, i) => v + b[i]!), () => 0, 'add');
      rt.mul(ap, bp, yp, n); close(rt.f32(yp, n), Float32Array.from(a, (v, i) => v * b[i]!), () => 0, 'mul');
      rt.scale(ap, yp, n, 0.125); close(rt.f32(yp, n), Float32Array.from(a, (v) => v * 0.125), () => 0, 'scale');
      const special = new Float32Array([0, -0, 1e-8, -6e-5, 65504, 65520, 1e6, Infinity, -Infinity, NaN, 5.960464477539063e-8, 2.9e-8, 1.0009765625, 1.00048828125]);
      const sp = put(rt, special), shp = rt.alloc(special.length * 2);
      rt.f32ToF16(sp, shp, special.length);
      assert.deepEqual(Array.from(rt.u16(shp, special.length)), Array.from(special, f32ToF16), 'f32->f16 special values');
      rt.f32ToF16(ap, hp, n);
      assert.deepEqual(rt.u16(hp, n), Uint16Array.from(a, f32ToF16), 'f32->f16');
      rt.release(m);
    });

    for (const [nTok, nHead, nKv, hd, kvBase, window] of [[3, 4, 2, 48, 5, 0], [1, 3, 3, 16, 0, 0], [2, 8, 2, 64, 37, 0], [1, 4, 1, 128, 200, 0], [9, 4, 2, 32, 0, 3], [6, 2, 1, 32, 3, 0], [1, 3, 1, 32, 9, 4], [2, 5, 1, 16, 4, 0],
      // decode: several 256-position superblocks, more heads than one pass serves (1024 dims), GQA pairs and singles,
      // an unaligned window start; batch: an odd token count (zigzag order), GQA 3
      [1, 16, 8, 128, 700, 0], [1, 16, 4, 64, 300, 0], [1, 8, 4, 256, 520, 0], [1, 6, 2, 128, 600, 301], [1, 7, 7, 64, 90, 0],
      [33, 4, 2, 64, 600, 0], [5, 6, 2, 32, 40, 7]] as const) {
    it(`attention (ggml numerics) equals the reference bit for bit (${nTok} tokens, ${nHead}/${nKv} heads, head ${hd}, ${kvBase} cached, window ${window})`, () => {
      const rnd = rng(11 + hd), nPos = kvBase + nTok;
      const q = randomF32(nTok * nHead * hd, rnd);
      const k16 = Uint16Array.from(randomF32(nPos * nKv * hd, rnd, 2), f32ToF16), v16 = Uint16Array.from(randomF32(nPos * nKv * hd, rnd), f32ToF16);
      const pos = Int32Array.from({ length: nTok }, (_, t) => kvBase + t);
      const m = rt.mark();
      const qp = put(rt, q), kp = put(rt, k16), vp = put(rt, v16), pp = put(rt, new Uint8Array(pos.buffer)), op = rt.alloc(q.length * 4);
      const scale = 1 / Math.sqrt(hd);
      rt.attentionGgml({ q: qp, k: kp, v: vp, out: op, nTokens: nTok, nHead, nKvHead: nKv, headDim: hd, scale, positions: pp, maxPos: nPos - 1, window });
      const want = new Float32Array(q.length);
      refAttention(q, nTok, pos, k16, v16, { nHead, nHeadKv: nKv, headDimK: hd, headDimV: hd, scale, softcap: 0, window }, want, nPos - 1);
      assert.deepEqual(rt.f32(op, q.length), want);
      rt.release(m);
    });
    }

    // flash attention: [tokens, heads, kv heads, head size, cached rows before the batch, window, softcap, seqStride]
    for (const [nTok, nHead, nKv, hd, kvBase, window, cap, stride] of [[3, 4, 2, 48, 5, 0, 0, 0], [1, 3, 3, 16, 0, 0, 0, 0], [2, 8, 2, 64, 37, 0, 0, 0], [1, 4, 1, 128, 200, 0, 0, 0], [9, 4, 2, 32, 0, 3, 0, 0], [6, 2, 1, 32, 3, 0, 50, 0], [1, 3, 1, 32, 9, 4, 30, 0], [2, 5, 1, 20, 4, 0, 0, 0], [5, 4, 2, 64, 70, 0, 0, 64], [33, 4, 1, 64, 300, 0, 0, 0]] as const) {
    it(`flash attention equals the reference bit for bit (${nTok} tokens, ${nHead}/${nKv} heads, head ${hd}, ${kvBase} cached, window ${window}, softcap ${cap}, seqStride ${stride})`, () => {
      const rnd = rng(29 + hd + nTok), nPos = kvBase + nTok + (stride ? 2 * stride : 0);
      // large scores (x4) make the online softmax find new maxima late and underflow some weights
      const q = randomF32(nTok * nHead * hd, rnd, 4);
      const k16 = Uint16Array.from(randomF32(nPos * nKv * hd, rnd, 2), f32ToF16), v16 = Uint16Array.from(randomF32(nPos * nKv * hd, rnd, 3), f32ToF16);
      // several sequences: tokens spread over three regions of `stride` rows
      const pos = Int32Array.from({ length: nTok }, (_, t) => stride ? (t % 3) * stride + ((kvBase + t) % stride) : kvBase + t);
      const m = rt.mark();
      const qp = put(rt, q), kp = put(rt, k16), vp = put(rt, v16), pp = put(rt, new Uint8Array(pos.buffer)), op = rt.alloc(q.length * 4);
      const scale = 1 / Math.sqrt(hd);
      rt.attentionFlash({ q: qp, k: kp, v: vp, out: op, nTokens: nTok, nHead, nKvHead: nKv, headDim: hd, scale, positions: pp, maxPos: nPos - 1, window, softcap: cap, seqStride: stride });
      const want = new Float32Array(q.length);
      const params = { nHead, nHeadKv: nKv, headDimK: hd, headDimV: hd, scale, softcap: cap, window };
      refFlash(q, nTok, pos, stride, k16, v16, params, want, flashWorkspace(params));
      assert.deepEqual(rt.f32(op, q.length), want);
      rt.release(m);
    });
    }
  });
}

describe('cpu runtime threads', () => {
  it('splits fewer rows than threads, skips empty ops, and reports a failing kernel instead of hanging', async () => {
    const rt = await createCpuRuntime({ threads: 2, parallelMinWork: 0, spin: 100 });
    try {
      const a = rt.alloc(64), y = rt.alloc(64);
      rt.f32(a, 1)[0] = 2;
      rt.add(a, a, y, 1); // 1 element on 2 threads
      assert.equal(rt.f32(y, 1)[0], 4);
      rt.add(a, a, y, 0);
      // rows out of bounds trap in both threads
      assert.throws(() => rt.matmulQ(GgmlType.Q8_0, 0xfff00000, 64, 256, a, 1, y), (e: Error & { code?: string }) => e.code === 'KERNEL_FAILED');
      // after reserve(), ops of the reserved shapes allocate nothing
      rt.reserve(5, 256, 64);
      rt.reserveAttentionGgml(64, 8, 2);
      const x = rt.alloc(5 * 256 * 4), w = rt.alloc(8 * 144), out = rt.alloc(8 * 5 * 4);
      const kv = rt.alloc(9 * 2 * 64 * 2), q = rt.alloc(5 * 4 * 64 * 4), o = rt.alloc(5 * 4 * 64 * 4), pos = rt.alloc(5 * 4);
      rt.u8(pos, 20).set(new Uint8Array(Int32Array.from([4, 5, 6, 7, 8]).buffer));
      const ropeArgs = { x: q, nTokens: 5, nHead: 4, headDim: 64, nDims: 64, positions: [0, 1, 2, 3, 4], freqBase: 1e4, neox: true };
      rt.reserveRope(ropeArgs, 8);
      const top = rt.mark();
      rt.matmul(GgmlType.Q4_K, w, 8, 256, x, 5, out);
      rt.matmul(GgmlType.Q8_0, w, 4, 64, x, 5, out);
      rt.rope(ropeArgs);
      rt.attentionGgml({ q, k: kv, v: kv, out: o, nTokens: 5, nHead: 4, nKvHead: 2, headDim: 64, scale: 0.125, positions: pos, maxPos: 8, window: 0 });
      rt.attentionGgml({ q, k: kv, v: kv, out: o, nTokens: 1, nHead: 4, nKvHead: 2, headDim: 64, scale: 0.125, positions: pos + 16, maxPos: 8, window: 0 });
      assert.equal(rt.mark(), top);
      // the pool still works afterwards
      rt.f32(a, 32).fill(1);
      rt.add(a, a, y, 16);
      assert.deepEqual(Array.from(rt.f32(y, 16)), new Array(16).fill(2));
    } finally {
      await rt.close();
    }
    await rt.close();
    assert.throws(() => rt.add(0, 0, 0, 1), (e: Error & { code?: string }) => e.code === 'CLOSED');
  });
  it('chunked matmuls: workers that wake late (spin 0) claim what is left; the rows equal one thread bit for bit', async () => {
    // spin 0: every worker sleeps between ops, so it joins each matmul late (or not at all) and a static op
    // follows a chunked one whose workers have not acknowledged it yet
    const many = await createCpuRuntime({ threads: 3, spin: 0, parallelMinWork: 0, numerics: 'fast' });
    const oneFast = await createCpuRuntime({ threads: 1, numerics: 'fast' });
    try {
      const rnd = rng(13);
      for (const [wt, rows, cols] of [[GgmlType.Q4_K, 1000, 512], [GgmlType.Q6_K, 77, 256], [GgmlType.Q8_0, 1029, 64], [GgmlType.F16, 130, 64]] as const) {
        const wb = randomWeights(wt, rows, cols, rnd);
        for (const nTok of [1, 3]) {
          const x = randomF32(cols * nTok, rnd, 2);
          const want = new Float32Array(rows * nTok);
          const ref = oneFast, pw = put(ref, wb), px = put(ref, x), py = ref.alloc(rows * nTok * 4);
          ref.matmul(wt, pw, rows, cols, px, nTok, py);
          want.set(ref.f32(py, rows * nTok));
          const mw = put(many, wb), mx = put(many, x), my = many.alloc(rows * nTok * 4), a = many.alloc(64), b = many.alloc(64);
          for (let rep = 0; rep < 40; rep++) {
            many.f32(my, rows * nTok).fill(NaN);
            many.matmul(wt, mw, rows, cols, mx, nTok, my);
            if (rep % 2) { many.f32(a, 16).fill(rep); many.add(a, a, b, 16); assert.equal(many.f32(b, 16)[15], 2 * rep); }
            assert.deepEqual(many.f32(my, rows * nTok), want, `${ggmlTypeName(wt)} ${rows}x${cols}, ${nTok} token(s), rep ${rep}`);
          }
        }
      }
    } finally {
      await Promise.all([many.close(), oneFast.close()]);
    }
  });
});

describe('cpu runtime memory', () => {
  it('reads a file range straight into the memory (Node)', async () => {
    const { writeFileSync, mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { readFileIntoMemory } = await import('../../../src/backends/cpu/node-io.js');
    const dir = mkdtempSync(join(tmpdir(), 'cpu-io-'));
    const rt = await createCpuRuntime({ threads: 1 });
    try {
      const bytes = Uint8Array.from({ length: 100000 }, (_, i) => (i * 7) & 255);
      writeFileSync(join(dir, 'w.bin'), bytes);
      const p = rt.alloc(50000);
      readFileIntoMemory(rt, join(dir, 'w.bin'), 1234, 50000, p);
      assert.deepEqual(rt.u8(p, 50000), bytes.subarray(1234, 51234));
      assert.throws(() => readFileIntoMemory(rt, join(dir, 'w.bin'), 90000, 20000, p), /end of file/);
    } finally {
      await rt.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('grows the memory, aligns, and names the sizes when wasm32 cannot hold an allocation', async () => {
    const rt = await createCpuRuntime({ threads: 1, maxMemoryBytes: 8 << 20 });
    try {
      const p = rt.alloc(3 << 20, 4096);
      assert.equal(p % 4096, 0);
      const m = rt.mark();
      rt.alloc(1 << 20);
      rt.release(m);
      assert.equal(rt.mark(), m);
      const arena = rt.createArena(4096);
      const p1 = arena.alloc(100), p2 = arena.alloc(100, 256);
      assert.ok(p1 >= arena.base && p2 % 256 === 0 && p2 >= p1 + 100);
      assert.throws(() => arena.alloc(4096), (e: Error & { code?: string }) => e.code === 'OUT_OF_MEMORY');
      arena.reset();
      assert.equal(arena.alloc(8), p1);
      assert.throws(() => rt.alloc(16 << 20), (e: Error & { code?: string }) => e.code === 'OUT_OF_MEMORY' && /16777216 bytes/.test(e.message));
    } finally {
      await rt.close();
    }
  });
});

// Continuous batching (NOTES.md): several sequences' decode tokens in one matmul take the one-token kernel
// order (matmul's `single` = 0), and the kernels compute them several at a time (the weights decoded once
// for 4 tokens). Each row must be the one-token call's result to the bit: every quantized type, 1..9 tokens
// (the groups of 4 and every remainder), both numerics, both kernel builds. (Float weights are the known
// exception: a batch runs tinyBLAS's order, one token ggml_vec_dot's; NOTES.md.)
describe('one-token-order batch rows equal one-token calls bit for bit', () => {
  for (const relaxedSimd of [true, false]) {
    for (const numerics of ['exact', 'fast'] as const) {
      it(`${relaxedSimd ? 'relaxed' : 'SIMD128'} build, ${numerics} numerics`, async () => {
        const rt = await createCpuRuntime({ threads: 2, spin: 2000, parallelMinWork: 0, numerics, relaxedSimd });
        try {
          const rnd = rng(11);
          for (const wt of TYPES.filter((t) => t !== GgmlType.F16 && t !== GgmlType.BF16 && t !== GgmlType.F32)) {
            const cols = 512, rows = 24;
            const m = rt.mark();
            const w = randomWeights(wt, rows, cols, rnd), x = randomF32(cols * 9, rnd);
            const wp = put(rt, w), xp = put(rt, x), yb = rt.alloc(rows * 9 * 4), y1 = rt.alloc(rows * 4);
            for (const nTok of [1, 2, 3, 4, 5, 6, 7, 8, 9]) {
              rt.matmul(wt, wp, rows, cols, xp, nTok, yb, undefined, undefined, 0);
              const got = rt.f32(yb, rows * nTok).slice();
              for (let t = 0; t < nTok; t++) {
                rt.matmul(wt, wp, rows, cols, xp + t * cols * 4, 1, y1);
                const want = rt.f32(y1, rows);
                for (let r = 0; r < rows; r++) {
                  if (!Object.is(got[t * rows + r], want[r])) assert.fail(`${ggmlTypeName(wt)} ${nTok} tokens: token ${t} row ${r}: ${got[t * rows + r]} != one-token ${want[r]}`);
                }
              }
            }
            rt.release(m);
          }
        } finally {
          await rt.close();
        }
      });
    }
  }
});

// attn_flash's tiled order (kernels/attention.ts flash_tiled: chunks of 256 rows, 8-dim V tiles, GQA pairs sharing
// K/V conversions, f16 rounding by a binade-sized add) against the reference in row order, bit for bit (Object.is:
// signed zeros and NaN count), in both kernel builds: several chunks, late maxima, windows, odd GQA, a pair split
// by the threads' slices, accumulators past 2^15 and past f16's range (the exact path's inf), and -0 accumulators.
describe('flash attention, tiled order (and the non-flash decode): both builds, long rows, overflow, signed zeros', () => {
  for (const relaxedSimd of [true, false]) {
    it(`${relaxedSimd ? 'relaxed' : 'SIMD128'} build`, async () => {
      const rt = await createCpuRuntime({ threads: 2, spin: 2000, parallelMinWork: 0, relaxedSimd });
      try {
        // [tokens, heads, kv heads, head size, cached rows, window, q scale, v kind]
        const cases = [[1, 16, 8, 128, 700, 0, 4, 'plain'], [1, 8, 2, 64, 530, 300, 4, 'plain'], [5, 6, 2, 32, 260, 0, 4, 'plain'],
          [1, 6, 3, 64, 300, 0, 4, 'plain'], [3, 6, 3, 64, 40, 0, 1, 'plain'], [1, 4, 2, 64, 300, 0, 0.01, 'huge'], [2, 4, 2, 32, 300, 0, 0.01, 'large'],
          [1, 4, 2, 64, 600, 0, 8, 'tiny'],
          // deep enough for the row-split decode (attn_dec_*, 768+ rows on 2 threads): GQA pairs, a window, odd GQA, unpaired head size
          [1, 16, 8, 128, 1500, 0, 4, 'plain'], [1, 8, 2, 64, 1200, 500, 4, 'plain'], [1, 6, 2, 64, 900, 0, 1, 'plain'], [1, 4, 2, 80, 800, 0, 4, 'plain'],
          [1, 4, 2, 64, 1000, 0, 8, 'tiny']] as const;
        for (const [nTok, nHead, nKv, hd, kvBase, window, qs, vk] of cases) {
          const rnd = rng(101 + hd + kvBase), nPos = kvBase + nTok;
          const q = randomF32(nTok * nHead * hd, rnd, qs);
          const k16 = Uint16Array.from(randomF32(nPos * nKv * hd, rnd, 2), f32ToF16);
          const vf = vk === 'huge' ? randomF32(nPos * nKv * hd, rnd, 440).map(Math.abs) : vk === 'large' ? randomF32(nPos * nKv * hd, rnd, 300).map(Math.abs)
            : vk === 'tiny' ? randomF32(nPos * nKv * hd, rnd, 1).map((x) => (x < -0.8 ? x * 1e-5 : 0)) : randomF32(nPos * nKv * hd, rnd, 3);
          const v16 = Uint16Array.from(vf, f32ToF16);
          const pos = Int32Array.from({ length: nTok }, (_, t) => kvBase + t);
          const m = rt.mark();
          const qp = put(rt, q), kp = put(rt, k16), vp = put(rt, v16), pp = put(rt, new Uint8Array(pos.buffer)), op = rt.alloc(q.length * 4);
          const scale = 1 / Math.sqrt(hd);
          rt.reserveAttentionFlash(hd);
          rt.attentionFlash({ q: qp, k: kp, v: vp, out: op, nTokens: nTok, nHead, nKvHead: nKv, headDim: hd, scale, positions: pp, maxPos: nPos - 1, window });
          const want = new Float32Array(q.length);
          const params = { nHead, nHeadKv: nKv, headDimK: hd, headDimV: hd, scale, softcap: 0, window };
          refFlash(q, nTok, pos, 0, k16, v16, params, want, flashWorkspace(params));
          const got = rt.f32(op, q.length);
          const what = `${nTok} tokens, ${nHead}/${nKv} heads, head ${hd}, ${kvBase} cached, v ${vk}`;
          for (let i = 0; i < want.length; i++) if (!Object.is(got[i], want[i])) assert.fail(`${what}: [${i}] got ${got[i]} want ${want[i]}`);
          // the special cases are real: inf in the reference, values past 2^15 / S, negative zeros
          if (vk === 'huge') assert.ok(want.some((x) => !Number.isFinite(x)), `${what}: no accumulator overflowed`);
          if (vk === 'large') assert.ok(want.every(Number.isFinite) && want.some((x) => x > 32768 / (kvBase + nTok)), `${what}: no accumulator past 2^15`);
          if (vk === 'tiny') assert.ok(want.some((x) => Object.is(x, -0)), `${what}: no negative zero`);
          // the non-flash one-token path (attn_ggml_decode, or attn_dec_* from 768 rows: 8-wide f16 loads, 2^112 on the queries and weights)
          if (nTok === 1 && vk !== 'huge') {
            rt.reserveAttentionGgml(hd, nPos - 1, nKv, nHead);
            rt.attentionGgml({ q: qp, k: kp, v: vp, out: op, nTokens: 1, nHead, nKvHead: nKv, headDim: hd, scale, positions: pp, maxPos: nPos - 1, window });
            refAttention(q, 1, pos, k16, v16, params, want, nPos - 1);
            const g = rt.f32(op, q.length);
            for (let i = 0; i < want.length; i++) if (!Object.is(g[i], want[i])) assert.fail(`ggml decode, ${what}: [${i}] got ${g[i]} want ${want[i]}`);
          }
          rt.release(m);
        }
      } finally {
        await rt.close();
      }
    });
  }
});

// The relaxed build uses f32x4.relaxed_madd as fmaf, so it runs only where the start-up probe proves it
// fused: the embedded relaxed build passes on this engine (it fuses), an unfused multiply-add does not.
describe('relaxed build: fused relaxed_madd probe', () => {
  it('passes for the relaxed build here and rejects an unfused (or missing) madd', async () => {
    const { compileKernels, relaxedSimdAvailable } = await import('../../../src/backends/cpu/wasm.js');
    const { fusedMaddTest } = await import('../../../src/backends/cpu/runtime.js');
    const memory = new WebAssembly.Memory({ initial: 2, maximum: 2, shared: true });
    if (relaxedSimdAvailable()) {
      const instance = await WebAssembly.instantiate(await compileKernels(undefined, 'relaxed'), { env: { memory } });
      assert.equal(fusedMaddTest(instance, memory), true);
    }
    const v = new Float32Array(memory.buffer, 1024, 16);
    const unfused = { exports: { fma_selftest: () => { for (let l = 0; l < 4; l++) v[12 + l] = Math.fround(Math.fround(v[l]! * v[4 + l]!) + v[8 + l]!); } } };
    assert.equal(fusedMaddTest(unfused as unknown as WebAssembly.Instance, memory), false);
    assert.equal(fusedMaddTest({ exports: {} } as unknown as WebAssembly.Instance, memory), false);
  });
});
