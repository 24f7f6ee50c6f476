// Agreement of two runs' next-token distributions over every position: top-1 and KL divergence.

export function logSoftmax(x: Float32Array): Float64Array {
  let max = -Infinity;
  for (const v of x) if (v > max) max = v;
  let sum = 0;
  for (const v of x) sum += Math.exp(v - max);
  const ls = Math.log(sum) + max;
  return Float64Array.from(x, (v) => v - ls);
}

export interface Agreement {
  positions: number;
  top1: number;
  meanKl: number;
  maxKl: number;
  /** positions where a's top-1 probability beats its top-2 by at least `margin`, and the top-1 agreement there */
  decisive: number;
  decisiveTop1: number;
}

/** Top-1 agreement and KL(a || b) per position of row-major logits (nVocab per row). */
export function agreement(a: Float32Array[], b: Float32Array[], nVocab: number, margin = 0.01): Agreement {
  let n = 0, same = 0, kl = 0, maxKl = 0, dec = 0, decSame = 0;
  a.forEach((ra, i) => {
    const rb = b[i]!;
    for (let r = 0; r < ra.length / nVocab; r++) {
      const la = logSoftmax(ra.subarray(r * nVocab, (r + 1) * nVocab)), lb = logSoftmax(rb.subarray(r * nVocab, (r + 1) * nVocab));
      let k = 0, ia = 0, ib = 0, p1 = -Infinity, p2 = -Infinity;
      for (let v = 0; v < nVocab; v++) {
        k += Math.exp(la[v]!) * (la[v]! - lb[v]!);
        if (la[v]! > la[ia]!) ia = v;
        if (lb[v]! > lb[ib]!) ib = v;
        if (la[v]! > p1) { p2 = p1; p1 = la[v]!; } else if (la[v]! > p2) p2 = la[v]!;
      }
      n++; kl += k; maxKl = Math.max(maxKl, k);
      if (ia === ib) same++;
      if (Math.exp(p1) - Math.exp(p2) >= margin) { dec++; if (ia === ib) decSame++; }
    }
  });
  return { positions: n, top1: same / n, meanKl: kl / n, maxKl, decisive: dec, decisiveTop1: dec ? decSame / dec : 1 };
}

