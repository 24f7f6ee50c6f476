// The cpu device's matmul float order (`--numerics`, createCpuDevice({ numerics })): the one place its default
// is set. Help texts and docs refer to DEFAULT_NUMERICS instead of restating it.
export type Numerics = 'exact' | 'fast';

/**
 * 'fast': free-order kernels for Q8_0, Q4_0 and the Q4_K GEMV, within the parity tolerances on every fixture
 * (test/parity/cpu.test.ts). 'exact': llama.cpp's x86 order, logits bit-identical with the reference device
 * and top-10 probabilities with llama.cpp's (test/parity/exact.test.ts); slower.
 */
export const DEFAULT_NUMERICS: Numerics = 'fast';

export const resolveNumerics = (n: Numerics | undefined): Numerics => n ?? DEFAULT_NUMERICS;
