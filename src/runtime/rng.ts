// MT19937, the generator llama.cpp's samplers use (std::mt19937), so seeds behave alike.
export class Mt19937 {
  private readonly mt = new Uint32Array(624);
  private idx = 625;
  constructor(seed: number) { this.seed(seed); }
  seed(s: number): void {
    this.mt[0] = s >>> 0;
    for (let i = 1; i < 624; i++) {
      const p = this.mt[i - 1]! ^ (this.mt[i - 1]! >>> 30);
      this.mt[i] = (Math.imul(1812433253, p) + i) >>> 0;
    }
    this.idx = 624;
  }
  nextU32(): number {
    if (this.idx >= 624) {
      for (let i = 0; i < 624; i++) {
        const y = (this.mt[i]! & 0x80000000) | (this.mt[(i + 1) % 624]! & 0x7fffffff);
        this.mt[i] = this.mt[(i + 397) % 624]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.idx = 0;
    }
    let y = this.mt[this.idx++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }
  /** uniform in [0, 1) with 53 bits */
  nextDouble(): number {
    const a = this.nextU32() >>> 5, b = this.nextU32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }
}
