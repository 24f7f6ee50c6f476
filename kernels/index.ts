// gguf-edge CPU kernels: AssemblyScript compiled to WebAssembly SIMD128 (the module's entry: its exports are the kernels).
//
// Every kernel works on raw byte pointers into the one shared WebAssembly.Memory and takes a
// half-open range [r0, r1) of the dimension that the thread pool splits (weight rows, tokens,
// heads or elements) as its first two arguments. No kernel allocates, keeps state or uses static
// data, so any number of instances (one per worker) can share the memory.
//
// Block layouts are ggml's:
//   Q4_0 18 B: f16 d, u8 qs[16]                 (x = d*(q-8); low nibbles 0..15, high 16..31)
//   Q4_1 20 B: f16 d, f16 m, u8 qs[16]
//   Q5_0 22 B: f16 d, u32 qh, u8 qs[16]
//   Q5_1 24 B: f16 d, f16 m, u32 qh, u8 qs[16]
//   Q8_0 34 B: f16 d, i8 qs[32]
//   Q8_1 36 B: f16 d, f16 s (= d * sum qs), i8 qs[32]
//   Q2_K 84 B: u8 scales[16], u8 qs[64], f16 d, f16 dmin
//   Q3_K 110 B: u8 hmask[32], u8 qs[64], u8 scales[12], f16 d
//   Q4_K 144 B: f16 d, f16 dmin, u8 scales[12], u8 qs[128]
//   Q5_K 176 B: f16 d, f16 dmin, u8 scales[12], u8 qh[32], u8 qs[128]
//   Q6_K 210 B: u8 ql[128], u8 qh[64], i8 scales[16], f16 d
//   Q8_K 292 B: f32 d, i8 qs[256], i16 bsums[16]
//
// Integer block sums are computed exactly as ggml does (integer arithmetic is exact); the float
// combination follows the ggml kernel llama.cpp's x86 build runs for the type where the cpu device relies
// on it (Q8_0, Q6_K, Q4_0 / Q4_0r4, Q4_K, F32, F16; see common/fmaf.ts). The other types'
// kernels keep their own (faster, free) order.
//
// Files, one concern each (as ggml-cpu): abi.ts (parameter-block layouts shared with the runtime),
// common/ (f16 conversion, SIMD reductions, emulated fmaf, v_expf, f16 dot orders, K-quant scale helpers, a token's first cache row),
// act/quantize.ts (activation quantizers and their side tables), mm/ (one file per weight type family,
// repack.ts the 4-row layouts), norm.ts, elementwise.ts, rope.ts, attention.ts, selftest.ts.
// The kernel ids are not kept here: scripts/build-kernels.mjs reads the export names from the compiled
// module, and that list is the dispatch table (src/backends/cpu/kernel-abi.gen.ts).

export * from './act/quantize';
export * from './mm/f32';
export * from './mm/f16';
export * from './mm/q4_0';
export * from './mm/q8_0';
export * from './mm/repack';
export * from './mm/legacy';
export * from './mm/q4_k';
export * from './mm/q6_k';
export * from './mm/q5_k';
export * from './mm/q3_k';
export * from './mm/kquant-misc';
export * from './mm/experts';
export * from './norm';
export * from './elementwise';
export * from './rope';
export * from './attention';
export * from './attention-kvq';
export * from './selftest';
export * from './recurrent';
export * from './mm/rows';
