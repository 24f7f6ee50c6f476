import { sincosf } from './common/libm';
import { fmaf } from './common/fmaf';

// RoPE in place. Rows r = token * nHead + head; the row of token t, head h is at x + t*ts + h*hs.
// cs: per token nDims/2 pairs (cos, sin) (rope_cache rows gathered by the runtime), 4*nDims bytes per token.
// neox = 0: rotate pairs (x[2i], x[2i+1]); neox = 1: rotate (x[i], x[i + nDims/2]).
// ggml's rotate_pairs as GCC contracts it: x0*cos - x1*sin = fma(x0, cos, -(x1*sin)), x0*sin + x1*cos =
// fma(x0, sin, x1*cos); the table holds glibc's cosf/sinf (rope_cache below)
export function rope(r0: i32, r1: i32, x: usize, ts: usize, hs: usize, nHead: i32, nDims: i32, cs: usize, neox: i32): void {
  const half = nDims >> 1;
  for (let r = r0; r < r1; r++) {
    const t = r / nHead, h = r - t * nHead;
    const xp = x + <usize>t * ts + <usize>h * hs;
    const c = cs + <usize>t * (<usize>nDims << 2);
    if (neox) {
      for (let i = 0; i < half; i++) {
        const co = load<f32>(c + (<usize>i << 3)), si = load<f32>(c + (<usize>i << 3), 4);
        const p0 = xp + (<usize>i << 2), p1 = xp + (<usize>(i + half) << 2);
        const a = load<f32>(p0), b = load<f32>(p1);
        store<f32>(p0, fmaf(a, co, -(b * si)));
        store<f32>(p1, fmaf(a, si, b * co));
      }
    } else {
      for (let i = 0; i < half; i++) {
        const co = load<f32>(c + (<usize>i << 3)), si = load<f32>(c + (<usize>i << 3), 4);
        const p = xp + (<usize>i << 3);
        const a = load<f32>(p), b = load<f32>(p, 4);
        store<f32>(p, fmaf(a, co, -(b * si)));
        store<f32>(p, fmaf(a, si, b * co), 4);
      }
    }
  }
}

// ggml's rope cache for positions [p0, p1) into out (nDims f32 per position: cos, sin of each pair j):
// theta_j = p * thetaScale^j by ggml's f32 recurrence, divided by the pair's frequency factor (ff != 0:
// nDims/2 f32) and times freqScale; glibc's cosf/sinf, times mscale (src/backends/rope-cache.ts is the
// same in TypeScript)
export function rope_cache(p0: i32, p1: i32, out: usize, nDims: i32, thetaScale: f32, freqScale: f32, ff: usize, mscale: f32): void {
  for (let p = p0; p < p1; p++) {
    let theta = <f32>p;
    const o = out + <usize>p * (<usize>nDims << 2);
    for (let j = 0; j < (nDims >> 1); j++) {
      const th = (ff ? theta / load<f32>(ff + (<usize>j << 2)) : theta) * freqScale;
      store<f32>(o + (<usize>j << 3), sincosf(th, true) * mscale);
      store<f32>(o + (<usize>j << 3) + 4, sincosf(th, false) * mscale);
      theta = theta * thetaScale;
    }
  }
}
