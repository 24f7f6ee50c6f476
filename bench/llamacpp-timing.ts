// llama.cpp timed the way llama-bench times it (tools/llama-bench: test_prompt / test_gen): the KV cache
// cleared, then pp = one llama_decode of the whole prompt batch (llama_batch_get_one: logits for the last
// token only), tg = one llama_decode per token (its logits computed), no sampling, no JS batching layer.
//
// node-llama-cpp's public sequence API (controlledEvaluate) is not that: it keeps one context cell free
// (freeSpace = contextSize - 1 - position), so a pp512 into a 512-cell context (bench:compare sizes the
// context as llama-bench does, n_ctx = the largest test) is split into a 511-token decode, a context shift
// (drops the first ~10% of the cells and RoPE-shifts the rest) and a 1-token decode, and it samples a token.
// BENCHMARKS.md has the measured cost. So the timing goes one level down, to the addon context node-llama-cpp
// itself drives (AddonContext: initBatch / addToBatch / decodeBatch, llama_memory_seq_rm to clear), in the
// pinned node-llama-cpp 3.21.1 (peers/package.json). Its internals are checked once, with a clear error.
import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';

/** The addon context's methods used here (node-llama-cpp 3.21.1, llama/addon/AddonContext.cpp). */
interface AddonContext {
  initBatch(size: number): void;
  addToBatch(sequenceId: number, firstTokenContextIndex: number, tokens: Uint32Array, logitIndexes: Uint32Array): Uint32Array;
  decodeBatch(): Promise<void>;
  disposeSequence(sequenceId: number): void;
  getSequenceKvCacheMaxPosition(sequenceId: number): number;
  getSequenceKvCacheMinPosition(sequenceId: number): number;
  removeTokenCellsFromSequence(sequenceId: number, startPos: number, endPos: number): boolean;
}

export interface LlamaBenchTimer {
  /** clears the sequence's cells (llama_memory_seq_rm(seq, 0, -1), as llama-bench's llama_memory_clear for one sequence) */
  clear(): void;
  /** drops the cells at positions >= pos (llama_memory_seq_rm(seq, pos, -1)): a depth filled once stays for the next run */
  truncate(pos: number): void;
  /** one llama_decode of `tokens` at positions pos.., logits for the last one; resolves when done */
  decode(tokens: Uint32Array, pos: number): Promise<void>;
  /** highest position in the sequence's KV cells (-1 when empty) */
  maxPosition(): number;
  /** lowest position in the sequence's KV cells (-1 when empty) */
  minPosition(): number;
  /** the sequence object, held for as long as the timer lives (see llamaBenchTimer) */
  readonly sequence: LlamaContextSequence;
}

export class LlamaInternalsError extends Error {
  readonly code = 'PEER_INTERNALS';
}

/** llama-bench style decode calls on a node-llama-cpp context's one sequence. */
export function llamaBenchTimer(ctx: LlamaContext, seq: LlamaContextSequence): LlamaBenchTimer {
  const addon = (ctx as unknown as { _ctx?: Partial<AddonContext> })._ctx;
  const id = (seq as unknown as { _sequenceId?: unknown })._sequenceId;
  const need: (keyof AddonContext)[] = ['initBatch', 'addToBatch', 'decodeBatch', 'disposeSequence', 'getSequenceKvCacheMaxPosition', 'getSequenceKvCacheMinPosition', 'removeTokenCellsFromSequence'];
  if (!addon || typeof id !== 'number' || need.some((k) => typeof addon[k] !== 'function')) {
    throw new LlamaInternalsError('node-llama-cpp internals differ from 3.21.1 (LlamaContext._ctx / LlamaContextSequence._sequenceId): install the peers pinned in peers/package.json');
  }
  const a = addon as AddonContext;
  const one = new Uint32Array(1);
  return {
    // not disposeSequence (seq_rm(seq, -1, -1)): on a hybrid model (qwen35: attention + recurrent memory) a prompt
    // decoded after that clear and a few one-token decodes left the sequence empty (max position -1, decode
    // returning success); seq_rm(seq, 0, -1) clears the same cells and the next batch lands (probed on
    // qwen3.5-0.8b:q4_k_m, llama.cpp v0.4.0: pp64, tg8, clear, pp64)
    clear() {
      if (!a.removeTokenCellsFromSequence(id, 0, -1)) throw new LlamaInternalsError('llama.cpp: clearing the sequence (llama_memory_seq_rm(seq, 0, -1)) failed');
    },
    truncate(pos) {
      if (!a.removeTokenCellsFromSequence(id, pos, -1)) throw new LlamaInternalsError(`llama.cpp: removing the cells from position ${pos} on failed`);
    },
    async decode(tokens, pos) {
      a.initBatch(tokens.length);
      one[0] = tokens.length - 1;
      a.addToBatch(id, pos, tokens, one);
      await a.decodeBatch();
    },
    maxPosition() { return a.getSequenceKvCacheMaxPosition(id); },
    minPosition() { return a.getSequenceKvCacheMinPosition(id); },
    // node-llama-cpp frees a sequence's id and cells (disposeSequence, from a FinalizationRegistry) once its
    // LlamaContextSequence object is garbage collected. Only the id is used here, so without this reference
    // a collection in the middle of a run emptied the cache: bench:compare then failed at random ("positions
    // -1..-1 after the run") on large batches, whose allocations make a collection likely
    sequence: seq,
  };
}

/**
 * Throws unless the sequence's KV cells end at position `to` (the timed run did its work). The lowest position
 * is only checked to be >= from where the memory keeps every position: a hybrid model's memory (qwen35:
 * attention + recurrent state) answers with the recurrent part's, which holds the last position alone.
 */
export function checkPositions(tm: LlamaBenchTimer, from: number, to: number): void {
  const lo = tm.minPosition(), hi = tm.maxPosition();
  if (hi !== to || lo < from || lo > to) throw new Error(`llama.cpp: the KV cache holds positions ${lo}..${hi} after the run, not ${from}..${to}`);
}
