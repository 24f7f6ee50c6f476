// The routes of `serve` (llama-server's surface, OpenAI's shapes): generation (chat, completions; plain JSON
// or SSE), models, health, props, slots, metrics, tokenize, detokenize. Each is also served without /v1.
import { randomBytes } from 'node:crypto';
import type { Tokenizer } from '../tokenizer/index.js';
import type { ChatFormatter } from '../tokenizer/chat-template.js';
import type { Engine, TaskEvents, TaskResult, TaskSpec, TokenLogprob } from './engine.js';
import { ApiError, asApiError } from './errors.js';
import type { Reply } from './http.js';
import { metricsText, type RequestCounter } from './metrics.js';
import { parseToolCalls, type ToolCall } from './tools.js';
import { parseBody, parseMessages, parseChat, parseCompletion, parseDetokenize, parseTokenize, type GenerationRequest, type ServerDefaults } from './request.js';

export interface Serving {
  engine: Engine;
  tok: Tokenizer;
  fmt: ChatFormatter;
  defaults: ServerDefaults;
  /** /v1/models meta */
  meta: { vocab_type: number; n_vocab: number; n_ctx_train: number; n_embd: number; n_params: number; size: number };
}

export interface ServerState {
  /** set once the model is loaded; until then /health answers 503 and the model routes 503 */
  serving?: Serving;
  alias: string;
  modelPath: string;
  nCtx: number;
  nParallel: number;
  slotsEndpoint: boolean;
  buildInfo: string;
  created: number;
  requests?: RequestCounter;
}

export type Handler = (r: Reply) => void | Promise<void>;

const loading = () => new ApiError(503, 'unavailable_error', 'Loading model', {}, { 'Retry-After': '1' });

function need(state: ServerState): Serving {
  if (!state.serving) throw loading();
  return state.serving;
}

export function routeTable(state: ServerState): Map<string, Record<string, Handler>> {
  const t = new Map<string, Record<string, Handler>>();
  const add = (paths: string[], method: string, h: Handler) => { for (const p of paths) t.set(p, { ...t.get(p), [method]: h }); };
  const v1 = (p: string) => [p, `/v1${p}`];

  add(v1('/health'), 'GET', (r) => {
    if (!state.serving) throw loading();
    r.json(200, { status: 'ok' });
  });
  add(v1('/models'), 'GET', (r) => {
    const s = state.serving;
    r.json(200, { object: 'list', data: [{ id: state.alias, object: 'model', created: state.created, owned_by: 'llamacpp', ...(s ? { meta: s.meta } : {}) }] });
  });
  add(['/metrics'], 'GET', (r) => {
    const text = metricsText(state.serving?.engine, state.requests!);
    r.res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
    r.res.end(text);
  });
  add(['/props'], 'GET', (r) => {
    const s = need(state);
    r.json(200, {
      default_generation_settings: { id: 0, id_task: -1, n_ctx: s.engine.nCtxSlot, is_processing: false, params: samplingView(s.defaults) },
      total_slots: s.engine.nSlots, model_path: state.modelPath, model_alias: state.alias,
      chat_template: s.tok.chatTemplate ?? s.fmt.name, modalities: { vision: false, audio: false },
      bos_token: s.tok.bos !== null ? s.tok.tokenText(s.tok.bos) : null, eos_token: s.tok.eos !== null ? s.tok.tokenText(s.tok.eos) : null,
      build_info: state.buildInfo, is_sleeping: false,
    });
  });
  add(['/slots'], 'GET', (r) => {
    if (!state.slotsEndpoint) throw new ApiError(501, 'not_supported_error', 'This server does not support slots endpoint (started with --no-slots)');
    const s = need(state);
    const info = s.engine.slotInfo();
    if (/[?&]fail_on_no_slot=1\b/.test(r.req.url ?? '') && info.every((x) => x.is_processing)) throw new ApiError(503, 'unavailable_error', 'no slot available');
    r.json(200, info.map((x) => ({ ...x, params: samplingView(s.defaults) })));
  });
  add(v1('/tokenize'), 'POST', (r) => {
    const s = need(state);
    const o = parseTokenize(parseBody(r.body));
    const ids = s.tok.tokenize(o.content, { addSpecial: o.addSpecial, parseSpecial: o.parseSpecial });
    if (!o.withPieces) return r.json(200, { tokens: ids });
    r.json(200, { tokens: ids.map((id) => ({ id, piece: piece(s.tok, id) })) });
  });
  add(v1('/detokenize'), 'POST', (r) => {
    const s = need(state);
    const ids = parseDetokenize(parseBody(r.body), s.tok.nVocab);
    r.json(200, { content: s.tok.detokenize(ids, { special: true }) });
  });
  add(['/apply-template'], 'POST', (r) => {
    const s = need(state);
    const messages = parseMessages(parseBody(r.body));
    r.json(200, { prompt: s.fmt.render(messages, { addGenerationPrompt: messages[messages.length - 1]!.role !== 'assistant' }) });
  });
  add(v1('/chat/completions'), 'POST', (r) => {
    const s = need(state);
    return generation(state, s, r, parseChat(parseBody(r.body), s.tok, s.fmt, s.defaults));
  });
  add(v1('/completions'), 'POST', (r) => {
    const s = need(state);
    return generation(state, s, r, parseCompletion(parseBody(r.body), s.tok, s.defaults));
  });
  return t;
}

/** A token's piece: text when it is valid UTF-8 on its own, else its bytes (llama-server's with_pieces). */
function piece(tok: Tokenizer, id: number): string | number[] {
  const b = tok.tokenToPiece(id, { special: true });
  try { return new TextDecoder('utf-8', { fatal: true }).decode(b); } catch { return Array.from(b); }
}

function samplingView(d: ServerDefaults): Record<string, unknown> {
  const s = d.sampling;
  return { n_predict: d.nPredict, temperature: s.temp, top_k: s.topK, top_p: s.topP, min_p: s.minP, repeat_penalty: s.repeatPenalty, repeat_last_n: s.repeatLastN, presence_penalty: s.presencePenalty, frequency_penalty: s.frequencyPenalty, seed: s.seed ?? -1 };
}

function chatLogprobs(lps: TokenLogprob[]) {
  return { content: lps.map((l) => ({ token: l.token, logprob: l.logprob, bytes: l.bytes, top_logprobs: l.top.map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes })) })) };
}

function completionLogprobs(lps: TokenLogprob[], offset0: number) {
  const text_offset: number[] = [];
  let off = offset0;
  for (const l of lps) { text_offset.push(off); off += l.token.length; }
  return {
    tokens: lps.map((l) => l.token), token_logprobs: lps.map((l) => l.logprob),
    top_logprobs: lps.map((l) => Object.fromEntries(l.top.map((t) => [t.token, t.logprob]))), text_offset,
  };
}

/** Runs a generation request: one engine task per (prompt, n) choice; JSON or SSE. */
async function generation(state: ServerState, s: Serving, r: Reply, g: GenerationRequest): Promise<void> {
  const chat = g.kind === 'chat';
  const id = `${chat ? 'chatcmpl' : 'cmpl'}-${randomBytes(12).toString('hex')}`;
  const created = Math.floor(Date.now() / 1000);
  const head = { id, object: chat ? 'chat.completion.chunk' : 'text_completion', created, model: state.alias, system_fingerprint: state.buildInfo };
  const specs: TaskSpec[] = [];
  for (const p of g.prompts) {
    for (let j = 0; j < g.n; j++) {
      const seed = g.spec.sampling.seed;
      // n > 1 with a fixed seed: distinct but reproducible choices
      specs.push({ ...g.spec, prompt: p, sampling: { ...g.spec.sampling, seed: seed !== undefined && j > 0 ? (seed + j) >>> 0 : seed } });
    }
  }
  const results: ((TaskResult & { logprobs: TokenLogprob[] }) | undefined)[] = specs.map(() => undefined);
  const textOffsets = specs.map(() => 0);
  let remaining = specs.length;
  let failed: ApiError | undefined;
  let finished = false;
  const { res } = r;
  let resolveDone!: () => void;
  const done = new Promise<void>((ok) => { resolveDone = ok; });

  // SSE plumbing: a write that stays blocked past the timeout drops the client (its slots are freed)
  let stall: NodeJS.Timeout | undefined;
  const send = (obj: unknown) => {
    if (res.destroyed || res.writableEnded) return;
    const ok = res.write(`data: ${JSON.stringify(obj)}\n\n`);
    if (!ok && !stall) {
      stall = setTimeout(() => res.destroy(), r.timeoutMs);
      res.once('drain', () => { clearTimeout(stall); stall = undefined; });
    }
  };

  const usage = () => {
    const promptTokens = g.prompts.reduce((a, p) => a + p.length, 0);
    const completionTokens = results.reduce((a, x) => a + (x?.tokens.length ?? 0), 0);
    return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens, prompt_tokens_details: { cached_tokens: results[0]?.timings.cache_n ?? 0 } };
  };
  const finishAll = () => {
    finished = true;
    clearTimeout(stall);
    if (g.stream) {
      if (failed) send(failed.body());
      else if (g.includeUsage) send({ ...head, choices: [], usage: usage(), timings: results[0]!.timings });
      if (!res.destroyed && !res.writableEnded) { res.write('data: [DONE]\n\n'); res.end(); }
    } else if (failed) r.json(failed.status, failed.body(), failed.headers);
    else {
      const choices = results.map((x, i) => chat
        ? { index: i, message: chatMessage(i, x!), logprobs: g.logprobs ? chatLogprobs(x!.logprobs) : null, finish_reason: finishReason(i, x!) }
        : { index: i, text: x!.text, logprobs: g.logprobs ? completionLogprobs(x!.logprobs, 0) : null, finish_reason: x!.finishReason });
      r.json(200, { id, object: chat ? 'chat.completion' : 'text_completion', created, model: state.alias, system_fingerprint: state.buildInfo, choices, usage: usage(), timings: results[0]!.timings });
    }
    resolveDone();
  };
  // chat with tools: each reply is split into content and tool calls once it is complete
  const replies: ({ content: string | null; calls: ToolCall[] } | undefined)[] = specs.map(() => undefined);
  const reply = (i: number, x: TaskResult) => (replies[i] ??= g.tools ? parseToolCalls(g.tools.format, x.text, g.tools.defs) : { content: x.text, calls: [] });
  const chatMessage = (i: number, x: TaskResult) => {
    const r = reply(i, x);
    return r.calls.length ? { role: 'assistant', content: r.content, tool_calls: r.calls } : { role: 'assistant', content: g.tools ? r.content ?? '' : x.text };
  };
  const finishReason = (i: number, x: TaskResult) => (reply(i, x).calls.length ? 'tool_calls' : x.finishReason);
  const collected: TokenLogprob[][] = specs.map(() => []);
  const events = specs.map((_, i): TaskEvents => ({
    onFirstToken() {
      if (g.stream && chat) send({ ...head, choices: [{ index: i, delta: { role: 'assistant', content: null }, logprobs: null, finish_reason: null }] });
    },
    onText(text, lps) {
      if (!g.stream || g.tools) { if (lps) collected[i]!.push(...lps); return; } // tool replies stream whole, at the end
      if (chat) send({ ...head, choices: [{ index: i, delta: { content: text }, logprobs: lps ? chatLogprobs(lps) : null, finish_reason: null }] });
      else {
        send({ ...head, choices: [{ index: i, text, logprobs: lps ? completionLogprobs(lps, textOffsets[i]!) : null, finish_reason: null }] });
        textOffsets[i]! += text.length;
      }
    },
    onDone(x) {
      results[i] = Object.assign(x, { logprobs: collected[i]! });
      if (g.stream && g.tools) {
        const r = reply(i, x);
        const delta = r.calls.length
          ? { ...(r.content ? { content: r.content } : {}), tool_calls: r.calls.map((c, k) => ({ index: k, ...c })) }
          : { content: r.content ?? '' };
        send({ ...head, choices: [{ index: i, delta, logprobs: null, finish_reason: null }] });
      }
      if (g.stream) {
        send(chat ? { ...head, choices: [{ index: i, delta: {}, logprobs: null, finish_reason: chat ? finishReason(i, x) : x.finishReason }] }
          : { ...head, choices: [{ index: i, text: '', logprobs: null, finish_reason: x.finishReason }] });
      }
      if (--remaining === 0) finishAll();
    },
    onError(e) {
      failed ??= e;
      if (--remaining === 0) finishAll();
    },
  }));
  const cancel = s.engine.submit(specs, events); // 503 when the queue is full: a plain HTTP error
  // a client that goes away frees its slots at once
  const gone = () => { if (!finished) { finished = true; cancel(); clearTimeout(stall); resolveDone(); } };
  res.on('close', gone);
  if (res.destroyed || !res.socket || res.socket.destroyed) gone(); // left while its body was read
  if (g.stream) {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
  }
  await done;
}

export { asApiError };
