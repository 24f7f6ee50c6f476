// The slot scheduler (continuous batching). `--parallel N` slots share one SeqContext; each slot is one
// sequence with its own KV rows, kept between requests so the next prompt reuses the longest common prefix.
// Every step is ONE decodeSeqs call: the pending token of every generating slot, plus prompt chunks of
// prefilling slots up to the batch budget, so running streams keep flowing while a new prompt is read in.
// Sampling is per slot (one sampler per task). Tasks beyond the free slots wait in a bounded FIFO queue.
import type { Tokenizer } from '../tokenizer/index.js';
import { createSampler, type Sampler, type SamplerParams } from '../runtime/sampler.js';
import type { StreamingDetokenizer } from '../tokenizer/index.js';
import { ApiError, asApiError } from './errors.js';
import { grammarConstraint, type Grammar, type TokenConstraint } from '../grammar/index.js';
import type { SeqContext, SeqEntry } from './seq-context.js';

export interface TaskSpec {
  prompt: number[];
  /** tokens to generate at most; -1: until end of generation or the slot's context is full */
  nPredict: number;
  sampling: Partial<SamplerParams>;
  stop: string[];
  ignoreEos: boolean;
  /** -1: no logprobs; k >= 0: the chosen token's logprob and the k most likely alternatives */
  topLogprobs: number;
  /** reuse the slot's cached prefix (default true, as llama-server) */
  cachePrompt: boolean;
  /** prompt tokens a context shift keeps (llama-server's n_keep; -1: the whole prompt; default 0) */
  nKeep?: number;
  /** constrain the output to this grammar (src/grammar): the budget rule applies and the task ends when it does */
  grammar?: Grammar;
}

export interface TokenProb { id: number; token: string; bytes: number[]; logprob: number }
export interface TokenLogprob extends TokenProb { top: TokenProb[] }

export interface Timings {
  cache_n: number; prompt_n: number; prompt_ms: number; prompt_per_token_ms: number; prompt_per_second: number;
  predicted_n: number; predicted_ms: number; predicted_per_token_ms: number; predicted_per_second: number;
}

export interface TaskResult {
  text: string;
  tokens: number[];
  finishReason: 'stop' | 'length';
  stopWord?: string;
  /** stopped because the slot's context filled up */
  truncated: boolean;
  nPrompt: number;
  timings: Timings;
}

export interface TaskEvents {
  /** the first generated token exists (TTFT); called before its text */
  onFirstToken?(): void;
  /** final text (never a partial stop string or UTF-8 sequence) and the logprobs of tokens sampled since */
  onText(text: string, logprobs: TokenLogprob[] | undefined): void;
  onDone(r: TaskResult): void;
  onError(e: ApiError): void;
}

interface Task {
  id: number;
  spec: TaskSpec;
  ev: TaskEvents;
  cancelled: boolean;
  tSubmit: number;
}

interface Slot {
  id: number;
  /** tokens in this sequence's KV cache */
  cached: number[];
  lastUsed: number;
  task?: Task;
  state: 'idle' | 'prefill' | 'generate';
  /** next prompt index to evaluate */
  pos: number;
  /** the sampled token not yet in the cache (input of the next decode) */
  pending: number;
  sampler?: Sampler;
  constraint?: TokenConstraint;
  detok?: StreamingDetokenizer;
  tokens: number[];
  text: string;
  /** text held back because it may start a stop string */
  held: string;
  logprobs: TokenLogprob[];
  cacheN: number;
  tStart: number;
  tPromptDone: number;
}

export interface EngineOptions {
  /** tokens evaluated per step at most (generating slots first, then prompt chunks) */
  nBatch: number;
  /** tasks waiting for a slot at most; beyond it submit() throws 503 */
  maxQueue: number;
  /** prompt tokens per step at most while other slots generate, so their streams keep flowing (default 128) */
  prefillChunk?: number;
  /** a slot whose context fills shifts it in place and goes on (llama-server's --context-shift); else it finishes 'length' */
  contextShift?: boolean;
}

/** Counters for /metrics (llama-server's names where they exist). */
export interface EngineStats {
  promptTokens: number;
  promptMs: number;
  cachedTokens: number;
  predictedTokens: number;
  predictedMs: number;
  decodeCalls: number;
  /** context shifts done (--context-shift) */
  contextShifts: number;
  tasksDone: number;
  tasksCancelled: number;
  tasksFailed: number;
  /** time to first token, seconds, per task */
  ttft: number[];
}

export const TTFT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class Engine {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private running = false;
  private nextTask = 1;
  private clock = 0;
  readonly stats: EngineStats = { promptTokens: 0, promptMs: 0, cachedTokens: 0, predictedTokens: 0, predictedMs: 0, decodeCalls: 0, contextShifts: 0, tasksDone: 0, tasksCancelled: 0, tasksFailed: 0, ttft: TTFT_BUCKETS.map(() => 0).concat(0) };
  ttftSum = 0;
  ttftCount = 0;

  constructor(readonly ctx: SeqContext, readonly tok: Tokenizer, readonly opts: EngineOptions) {
    for (let i = 0; i < ctx.nSeq; i++) this.slots.push(newSlot(i));
  }

  get nSlots(): number { return this.slots.length; }
  get nCtxSlot(): number { return this.ctx.nCtxSeq; }
  get queued(): number { return this.queue.length; }
  get busy(): number { return this.slots.filter((s) => s.task).length; }

  slotInfo(): { id: number; n_ctx: number; is_processing: boolean; id_task: number; n_cached: number; n_decoded: number; state: string }[] {
    return this.slots.map((s) => ({ id: s.id, n_ctx: this.nCtxSlot, is_processing: !!s.task, id_task: s.task?.id ?? -1, n_cached: s.cached.length, n_decoded: s.tokens.length, state: s.state }));
  }

  /** KV positions in use over all slots, as a fraction */
  kvUsage(): number { return this.slots.reduce((a, s) => a + s.cached.length, 0) / (this.nCtxSlot * this.slots.length); }

  /**
   * Queues tasks (one per choice of a request). Throws ApiError 503 when they would not fit in the queue.
   * Returns a cancel function: a cancelled task leaves the queue, or frees its slot at the next step.
   */
  submit(specs: TaskSpec[], events: TaskEvents[]): () => void {
    const free = this.slots.filter((s) => !s.task).length;
    if (this.queue.length + specs.length - free > this.opts.maxQueue) {
      throw new ApiError(503, 'unavailable_error', `the server is busy: ${this.queue.length} requests wait for ${this.slots.length} slots (--max-queue ${this.opts.maxQueue})`, {}, { 'Retry-After': '1' });
    }
    const tasks = specs.map((spec, i): Task => ({ id: this.nextTask++, spec, ev: events[i]!, cancelled: false, tSubmit: performance.now() }));
    this.queue.push(...tasks);
    this.kick();
    return () => {
      for (const t of tasks) {
        if (t.cancelled) continue;
        t.cancelled = true;
        const qi = this.queue.indexOf(t);
        if (qi >= 0) { this.queue.splice(qi, 1); this.stats.tasksCancelled++; }
      }
      this.kick();
    };
  }

  private idle: Promise<void> = Promise.resolve();

  private kick(): void {
    if (this.running) return;
    this.running = true;
    this.idle = this.loop().finally(() => { this.running = false; });
  }

  /** Cancels every task and resolves once no evaluation is in flight (the context can then be closed). */
  async shutdown(): Promise<void> {
    for (const t of this.queue) t.cancelled = true;
    this.queue.length = 0;
    for (const s of this.slots) if (s.task) s.task.cancelled = true;
    await this.idle;
  }

  private async loop(): Promise<void> {
    for (;;) {
      this.release();
      this.assign();
      if (!this.slots.some((s) => s.task)) return;
      await this.step();
      // let the HTTP side run (new requests, writes, disconnects) between steps
      await new Promise((r) => setImmediate(r));
    }
  }

  /** Frees the slots of cancelled tasks (their cache stays: it holds exactly what was evaluated). */
  private release(): void {
    for (const s of this.slots) {
      if (s.task?.cancelled) { this.stats.tasksCancelled++; this.free(s); }
    }
  }

  private free(s: Slot): void {
    s.task = undefined;
    s.state = 'idle';
    s.sampler = undefined;
    s.constraint = undefined;
    s.detok = undefined;
    s.lastUsed = ++this.clock;
  }

  /** Queued tasks into idle slots: the slot with the longest common cached prefix, else the least recently used. */
  private assign(): void {
    while (this.queue.length) {
      const idle = this.slots.filter((s) => !s.task);
      if (!idle.length) return;
      const t = this.queue.shift()!;
      let best = idle[0]!, bestN = -1;
      for (const s of idle) {
        const n = t.spec.cachePrompt ? commonPrefix(s.cached, t.spec.prompt) : 0;
        if (n > bestN || (n === bestN && s.lastUsed < best.lastUsed)) { best = s; bestN = n; }
      }
      this.start(best, t);
    }
  }

  private start(s: Slot, t: Task): void {
    const p = t.spec.prompt;
    let keep = t.spec.cachePrompt ? commonPrefix(s.cached, p) : 0;
    if (keep === p.length) keep--; // the last prompt token is evaluated again for its logits
    this.ctx.truncateSeq(s.id, keep);
    // a sliding-window ring that no longer holds the window before `keep` keeps nothing (Context.truncate)
    keep = this.ctx.seqPast(s.id);
    s.cached.length = keep;
    s.task = t;
    s.state = 'prefill';
    s.pos = keep;
    s.cacheN = keep;
    s.pending = -1;
    s.tokens = [];
    s.text = '';
    s.held = '';
    s.logprobs = [];
    s.constraint = t.spec.grammar ? grammarConstraint(t.spec.grammar, this.tok) : undefined;
    s.sampler = createSampler(this.ctx.nVocab, t.spec.sampling, s.constraint ?? null);
    for (const id of p) s.sampler.accept(id); // the penalties see the prompt, as `run` does
    s.detok = this.tok.stream({ special: false });
    s.tStart = performance.now();
    s.tPromptDone = 0;
    this.stats.cachedTokens += keep;
  }

  private async step(): Promise<void> {
    const batch: SeqEntry[] = [];
    const owners: { slot: Slot; n: number; out: boolean }[] = [];
    let budget = this.opts.nBatch;
    for (const s of this.slots) {
      if (s.state !== 'generate') continue;
      batch.push({ seq: s.id, tokens: [s.pending], logits: 'last' });
      owners.push({ slot: s, n: 1, out: true });
      budget--;
    }
    // prompt chunks, oldest task first; at least one token of progress per step. While streams run, a
    // step reads at most prefillChunk prompt tokens (their next token waits for the whole step)
    if (batch.length) budget = Math.min(budget, this.opts.prefillChunk ?? 128);
    const prefilling = this.slots.filter((s) => s.state === 'prefill').sort((a, b) => a.task!.id - b.task!.id);
    for (const s of prefilling) {
      if (budget <= 0 && batch.length) break;
      const p = s.task!.spec.prompt;
      const n = Math.min(Math.max(budget, 1), p.length - s.pos);
      const last = s.pos + n === p.length;
      batch.push({ seq: s.id, tokens: p.slice(s.pos, s.pos + n), logits: last ? 'last' : 'none' });
      owners.push({ slot: s, n, out: last });
      budget -= n;
    }
    let logits: Float32Array;
    try {
      logits = await this.ctx.decodeSeqs(batch);
    } catch (e) {
      // a failed evaluation fails the tasks in it; their caches are unknown, so they start empty
      const err = asApiError(e);
      for (const { slot } of owners) {
        this.ctx.truncateSeq(slot.id, 0);
        slot.cached.length = 0;
        const t = slot.task!;
        this.free(slot);
        this.stats.tasksFailed++;
        t.ev.onError(err);
      }
      return;
    }
    this.stats.decodeCalls++;
    const nV = this.ctx.nVocab;
    let row = 0;
    const now = performance.now();
    for (let i = 0; i < owners.length; i++) {
      const { slot: s, n, out } = owners[i]!;
      const e = batch[i]!;
      for (let k = 0; k < n; k++) s.cached.push(e.tokens[k]!);
      if (s.state === 'prefill') {
        s.pos += n;
        if (s.pos === s.task!.spec.prompt.length) {
          s.tPromptDone = now;
          s.state = 'generate';
          this.stats.promptTokens += s.pos - s.cacheN;
          this.stats.promptMs += now - s.tStart;
        }
      }
      if (!out) continue;
      const r = logits.subarray(row * nV, (row + 1) * nV);
      row++;
      if (s.task!.cancelled) continue; // freed at the next step
      this.onLogits(s, r);
    }
  }

  /** Samples the slot's next token from `logits` and streams it; finishes the task when it is done. */
  private onLogits(s: Slot, logits: Float32Array): void {
    const t = s.task!, spec = t.spec;
    if (spec.nPredict === 0) return this.finish(s, 'length', false);
    const c = s.constraint;
    let id: number;
    try {
      // the budget rule: the grammar must be able to finish within the tokens this task may still produce
      if (c) c.remaining = Math.min(spec.nPredict >= 0 ? spec.nPredict - s.tokens.length : Infinity, this.ctx.nCtxSeq - s.cached.length + 1);
      id = s.sampler!.sample(logits);
      c?.accept(id);
    } catch (e) {
      // a grammar the vocabulary cannot continue: the task fails, the slot is freed
      const t0 = s.task!;
      this.free(s);
      this.stats.tasksFailed++;
      t0.ev.onError(new ApiError(500, 'server_error', `${(e as { code?: string }).code ? `[${(e as { code: string }).code}] ` : ''}${(e as Error).message}`));
      return;
    }
    s.sampler!.accept(id);
    if (s.tokens.length === 0) {
      const ttft = (performance.now() - t.tSubmit) / 1000;
      this.recordTtft(ttft);
      t.ev.onFirstToken?.();
    }
    s.tokens.push(id);
    const lp = spec.topLogprobs >= 0 ? tokenLogprob(this.tok, logits, id, spec.topLogprobs) : undefined;
    if ((!spec.ignoreEos || c) && this.tok.isEog(id)) {
      if (lp) s.logprobs.push(lp);
      return this.finish(s, 'stop', false);
    }
    if (lp) s.logprobs.push(lp);
    const stopped = this.feed(s, s.detok!.push(id), false);
    if (stopped !== undefined) return this.finish(s, 'stop', false, stopped);
    if (c?.done) return this.finish(s, 'stop', false);
    if (spec.nPredict >= 0 && s.tokens.length >= spec.nPredict) return this.finish(s, 'length', false);
    if (s.cached.length + 1 > this.ctx.nCtxSeq && !this.shift(s)) return this.finish(s, 'length', true);
    s.pending = id;
  }

  /**
   * Context shift of a full slot (--context-shift): keep the request's n_keep prompt tokens, forget half of the
   * rest, in place (the same rule as the library's generation loop, so `run --keep` gives the same tokens).
   */
  private shift(s: Slot): boolean {
    if (!this.opts.contextShift) return false;
    const spec = s.task!.spec, n = s.cached.length;
    const nKeep = Math.max(0, Math.min(spec.nKeep === undefined ? 0 : spec.nKeep < 0 ? spec.prompt.length : spec.nKeep, n - 1));
    const nDiscard = Math.max(1, Math.floor((n - nKeep) / 2));
    if (!this.ctx.shiftSeq(s.id, nKeep, nDiscard)) return false;
    s.cached.splice(nKeep, nDiscard);
    this.stats.contextShifts++;
    return true;
  }

  /** Adds text; emits what can no longer start a stop string. Returns the stop string found, if any. */
  private feed(s: Slot, piece: string, final: boolean): string | undefined {
    const stops = s.task!.spec.stop;
    let pending = s.held + piece;
    let found: string | undefined;
    let emitUpTo = pending.length;
    let best = -1;
    for (const w of stops) {
      const at = pending.indexOf(w);
      if (at >= 0 && (best < 0 || at < best)) { best = at; found = w; }
    }
    if (found !== undefined) { pending = pending.slice(0, best); emitUpTo = pending.length; }
    else if (!final) {
      let hold = 0;
      for (const w of stops) for (let k = Math.min(w.length - 1, pending.length); k > hold; k--) if (pending.endsWith(w.slice(0, k))) { hold = k; break; }
      emitUpTo = pending.length - hold;
    }
    const text = pending.slice(0, emitUpTo);
    s.held = found !== undefined ? '' : pending.slice(emitUpTo);
    if (text || s.logprobs.length) {
      s.text += text;
      const lps = s.logprobs.length ? s.logprobs : undefined;
      s.logprobs = [];
      s.task!.ev.onText(text, lps);
    }
    return found;
  }

  private finish(s: Slot, reason: 'stop' | 'length', truncated: boolean, stopWord?: string): void {
    const t = s.task!;
    if (stopWord === undefined) this.feed(s, s.detok!.flush(), true);
    const now = performance.now();
    const nPrompt = t.spec.prompt.length, promptN = nPrompt - s.cacheN;
    const promptMs = (s.tPromptDone || now) - s.tStart, predMs = now - (s.tPromptDone || now);
    const nGen = s.tokens.length;
    this.stats.predictedTokens += nGen;
    this.stats.predictedMs += predMs;
    this.stats.tasksDone++;
    const result: TaskResult = {
      text: s.text, tokens: s.tokens, finishReason: reason, stopWord, truncated, nPrompt,
      timings: {
        cache_n: s.cacheN, prompt_n: promptN, prompt_ms: promptMs,
        prompt_per_token_ms: promptN ? promptMs / promptN : 0, prompt_per_second: promptMs > 0 ? (promptN * 1000) / promptMs : 0,
        predicted_n: nGen, predicted_ms: predMs,
        predicted_per_token_ms: nGen ? predMs / nGen : 0, predicted_per_second: predMs > 0 ? (nGen * 1000) / predMs : 0,
      },
    };
    this.free(s);
    try { t.ev.onDone(result); } catch { /* a failing listener loses nothing else */ }
  }

  private recordTtft(sec: number): void {
    this.ttftSum += sec;
    this.ttftCount++;
    let i = 0;
    while (i < TTFT_BUCKETS.length && sec > TTFT_BUCKETS[i]!) i++;
    this.stats.ttft[i]!++;
  }
}

function newSlot(id: number): Slot {
  return { id, cached: [], lastUsed: 0, state: 'idle', pos: 0, pending: -1, tokens: [], text: '', held: '', logprobs: [], cacheN: 0, tStart: 0, tPromptDone: 0 };
}

export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

const decoder = new TextDecoder();

function prob(tok: Tokenizer, id: number, logprob: number): TokenProb {
  const bytes = tok.tokenToPiece(id, { special: false });
  return { id, token: decoder.decode(bytes), bytes: Array.from(bytes), logprob };
}

/** log-softmax of the raw logits at `id`, and the k most likely tokens (highest first, lower id on ties) */
export function tokenLogprob(tok: Tokenizer, logits: Float32Array, id: number, k: number): TokenLogprob {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  const lse = max + Math.log(sum);
  const top: number[] = [];
  if (k > 0) {
    for (let i = 0; i < logits.length; i++) {
      if (top.length === k && !(logits[i]! > logits[top[k - 1]!]!)) continue;
      let j = top.length < k ? top.length : k - 1;
      while (j > 0 && logits[top[j - 1]!]! < logits[i]!) { if (j < k) top[j] = top[j - 1]!; j--; }
      top[j] = i;
    }
  }
  return { ...prob(tok, id, Math.min(0, logits[id]! - lse)), top: top.map((t) => prob(tok, t, Math.min(0, logits[t]! - lse))) };
}
