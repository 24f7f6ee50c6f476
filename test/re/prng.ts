// Seeded PRNG for tests (mulberry32): every corpus and fuzz input is reproducible from its seed.

export interface Rng {
  next(): number;
  int(lo: number, hi: number): number;
  bool(p?: number): boolean;
  bytes(n: number): Uint8Array;
  pick<T>(xs: readonly T[]): T;
}

export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  return {
    next, int,
    bool: (p = 0.5) => next() < p,
    bytes: (n) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = int(0, 255); return b; },
    pick: (xs) => xs[int(0, xs.length - 1)]!,
  };
}
