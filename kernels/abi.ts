// The byte layout of the kernels' parameter blocks: the one definition shared by the AssemblyScript kernels
// (imported here) and the TypeScript runtime (scripts/build-kernels.mjs copies this file verbatim into
// src/backends/cpu/kernel-abi.gen.ts, next to the kernel names it reads from the compiled module's exports,
// whose order is the dispatch index). Plain integer constants only: the file must compile as both languages.
//
// Kernels with more arguments than fit the pool's control block take one pointer to a parameter block in the
// wasm memory: 4-byte fields (i32, or f32 where named), written by the runtime before each dispatch.

/** bytes the runtime reserves for one parameter block (both attention blocks fit) */
export const PARAM_BLOCK_BYTES = 256;

// attn_ggml (kernels/attention.ts): attention with ggml's non-flash numerics
export const AG_Q = 0; // f32 queries
export const AG_Q_STRIDE = 4; // bytes per query token
export const AG_K = 8; // f16 K cache
export const AG_V = 12; // f16 V cache
export const AG_KV_STRIDE = 16; // bytes per cache position
export const AG_OUT = 20; // f32 output
export const AG_OUT_STRIDE = 24; // bytes per output token
export const AG_N_HEAD = 28;
export const AG_GQA = 32; // query heads per kv head
export const AG_HEAD_DIM = 36;
export const AG_SCALE = 40; // f32
export const AG_WINDOW = 44; // sliding window (0: none)
export const AG_POSITIONS = 48; // i32 position of each query token
export const AG_SCRATCH = 52; // scratch of every thread
export const AG_SCRATCH_BYTES = 56; // scratch bytes per thread
export const AG_SLICE = 60; // work items per thread
export const AG_BATCH = 64; // 1: tinyBLAS order (2+ query tokens), K/V widened by attn_kv_f32
export const AG_KF = 68; // batch: f32 K rows per kv head
export const AG_VT = 72; // batch: transposed f32 V per kv head
export const AG_P16 = 76; // batch: positions per kv head, rounded up to 16
export const AG_SOFTCAP = 80; // f32: scores become tanh(s / cap) * cap before the scale (gemma2); 0: none
export const AG_SEQ_STRIDE = 84; // several sequences in one cache: rows per sequence region (token at row r sees rows from r - r % stride); 0: one sequence
export const AG_KV_BASE = 88; // batch: the first cache row attn_kv_f32 widened (KF / VT row 0)
export const AG_KV_Q4 = 92; // attn_flash_q8: 1 = the caches are q4_0 (18-byte blocks), 0 = q8_0
export const AG_N_TOKENS = 96; // attn_ggml batch: query tokens (items / heads)
export const AG_DEC_HEADS = 100; // attn_ggml decode: heads served per pass over the cache (runtime/attention.ts decodeHeads)
// attn_dec_* (one query token split over the cache rows): rows per attn_dec_scores item, the score rows (one per
// head, AG_DR_SCLEN bytes apart, indexed by cache row), each scores item's maxima (items x heads f32), the lane
// accumulators (per head 65 x headDim f32: groups of 4 dims, 64 lanes each, 1040 bytes apart), scores items
export const AG_DR_BLOCK = 104;
export const AG_DR_SC = 108;
export const AG_DR_SCLEN = 112;
export const AG_DR_MX = 116;
export const AG_DR_ACC = 120;
export const AG_DR_ITEMS = 124;

// attn_kv_f32 (kernels/attention.ts): a batch's K and V widened to f32; its block sits at
// AKV_BLOCK bytes into the attn_ggml block
export const AKV_BLOCK = 128;
export const AKV_K = 0;
export const AKV_V = 4;
export const AKV_KV_STRIDE = 8;
export const AKV_HEAD_DIM = 12;
export const AKV_MAX_POS = 16;
export const AKV_KF = 20;
export const AKV_VT = 24;
export const AKV_P16 = 28;

// attn_ggml's decode pass (kernels/attention.ts attn_ggml_decode): positions per superblock of its V pass and
// the most query dims (heads x head size) it serves per pass over the cache; the runtime sizes its scratch from them
export const DEC_SB = 256;
export const DEC_DIMS = 1024;
// attn_flash's tiled order (kernels/attention.ts flash_tiled): cache rows per chunk (its scratch holds 4 f32 per row)
export const FLASH_CH = 256;

// mm_experts (kernels/mm/experts.ts): the one-token kernel it runs for every selected expert's rows, and the
// slot table's layout (per slot: u32 weight matrix, u32 first activation row, u32 its side-table row, u32 first
// output row, i32 rows)
export const MMX_Q4_0 = 0;
export const MMX_Q4_0R4 = 1;
export const MMX_Q4_0R4_FAST = 2;
export const MMX_Q4_1 = 3;
export const MMX_Q5_0 = 4;
export const MMX_Q5_1 = 5;
export const MMX_Q8_0 = 6;
export const MMX_Q8_0_FAST = 7;
export const MMX_Q8_0R4_FAST = 8;
export const MMX_Q2_K = 9;
export const MMX_Q3_K = 10;
export const MMX_Q4_K = 11;
export const MMX_Q4_K_FAST = 12;
export const MMX_Q5_K = 13;
export const MMX_Q6_K = 14;
export const MMX_IQ4_NL = 15;
export const MMX_IQ4_XS = 16;
export const MMX_SLOT_BYTES = 20;
