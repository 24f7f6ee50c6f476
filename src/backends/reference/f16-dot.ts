// f16 dot products in the two summation orders of ggml's x86 CPU backend (AVX-512 build):
// - dotF16Order: llamafile's tinyBLAS, which takes f16 mul_mats with at least 2 columns (a prompt
//   batch: the attention's K·Q and V·softmax, f16 weights): 16 f32 lanes, lane l accumulating
//   elements l, l+16, l+32, ... with fused multiply-add, then _mm512_reduce_add_ps's tree.
// - dotF16Vec: ggml_vec_dot_f16, which runs when tinyBLAS declines (a one-token decode).
// f16 x f16 products are exact in f32, so the FMA is one rounding of an exact sum here.
// Matching the order matters more than it seems: these results are later rounded to f16 or
// quantized to 8 bits, where a last-bit difference can flip a rounding and change the output.

const lanes = new Float64Array(16);
const f = Math.fround;

function reduce16(): number {
  return reduceAdd16(lanes);
}

/** _mm512_reduce_add_ps of 16 f32 lanes, in GCC's order (__MM512_REDUCE_OP): hi256 + lo256, then hi128 + lo128, then [0]+[2], [1]+[3], then [0]+[1]. */
export function reduceAdd16(lanes: ArrayLike<number>): number {
  const t3 = [0, 0, 0, 0, 0, 0, 0, 0];
  for (let i = 0; i < 8; i++) t3[i] = f(lanes[i]! + lanes[i + 8]!);
  const t6 = [f(t3[0]! + t3[4]!), f(t3[1]! + t3[5]!), f(t3[2]! + t3[6]!), f(t3[3]! + t3[7]!)];
  return f(f(t6[0]! + t6[2]!) + f(t6[1]! + t6[3]!));
}

/**
 * Dot of x[xo + i*xs] and y[yo + i] over i < n (n a multiple of 16; values already f16-exact
 * f32 numbers), tinyBLAS order. `xs` lets V be read down a column of the cache.
 */
export function dotF16Order(n: number, x: ArrayLike<number>, xo: number, xs: number, y: ArrayLike<number>, yo: number): number {
  lanes.fill(0);
  for (let i = 0; i < n; i++) {
    const l = i & 15;
    // f16 x f16 is exact in double; one rounding = the FMA's
    lanes[l] = f(lanes[l]! + x[xo + i * xs]! * y[yo + i]!);
  }
  return reduce16();
}

const acc = new Float64Array(64);
/** ggml_vec_dot_f16 on AVX-512: 4 accumulators x 16 lanes over 64-element steps, rest in double. */
export function dotF16Vec(n: number, x: ArrayLike<number>, xo: number, xs: number, y: ArrayLike<number>, yo: number): number {
  acc.fill(0);
  const np = n & ~63;
  for (let i = 0; i < np; i++) acc[i & 63] = f(acc[i & 63]! + x[xo + i * xs]! * y[yo + i]!);
  for (let l = 0; l < 16; l++) {
    const a0 = f(acc[l]! + acc[32 + l]!), a1 = f(acc[16 + l]! + acc[48 + l]!);
    lanes[l] = f(a0 + a1);
  }
  let s = reduce16();
  for (let i = np; i < n; i++) s += f(x[xo + i * xs]! * y[yo + i]!);
  return f(s);
}
