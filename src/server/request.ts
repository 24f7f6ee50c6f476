// Request parsing and validation for the generation routes, in one place: JSON body -> the tasks the engine
// runs (one per choice). Every field is type-checked; a bad one is a 400 naming it. Constrained output
// (response_format, grammar, json_schema, tools/tool_choice) goes through parseConstraints: the grammar is
// parsed (and a JSON Schema converted) here, so a bad one is a 400 before any slot is taken.
import type { Tokenizer } from '../tokenizer/index.js';
import { ChatTemplateError, type ChatFormatter, type ChatMessage } from '../tokenizer/chat-template.js';
import type { SamplerParams } from '../runtime/sampler.js';
import { ApiError, badRequest, exceedContext, notSupported } from './errors.js';
import { GrammarError, GrammarMatcher, jsonSchemaToGrammar, parseGbnf, type Grammar } from '../grammar/index.js';
import { parseTools, templateTools, toolCallGrammar, toolFormat, type ToolChoice, type ToolDef, type ToolFormat } from './tools.js';
import type { TaskSpec } from './engine.js';

export type Body = Record<string, unknown>;

export interface ServerDefaults {
  sampling: SamplerParams;
  /** server -n: the default and the cap of every request's token limit (-1: none) */
  nPredict: number;
  nCtxSlot: number;
  nVocab: number;
}

export interface GenerationRequest {
  kind: 'chat' | 'completion';
  /** one entry per prompt (completions accept several); each runs `n` times */
  prompts: number[][];
  n: number;
  stream: boolean;
  includeUsage: boolean;
  /** chat: logprobs: true; completions: logprobs: N */
  logprobs: boolean;
  spec: Omit<TaskSpec, 'prompt'>;
  /** the rendered chat prompt (chat only) */
  promptText?: string;
  /** chat with tools: the reply is parsed for tool calls */
  tools?: Constraints['tools'];
}

/** The body must be a JSON object. */
export function parseBody(raw: string): Body {
  let v: unknown;
  try { v = JSON.parse(raw); } catch (e) { throw badRequest(`the request body is not valid JSON: ${(e as Error).message}`); }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest('the request body must be a JSON object');
  return v as Body;
}

const present = (b: Body, k: string): boolean => Object.hasOwn(b, k) && b[k] !== null && b[k] !== undefined;

function number(b: Body, k: string, min: number, max: number): number | undefined {
  if (!present(b, k)) return undefined;
  const v = b[k];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(`"${k}" must be a number`);
  if (v < min || v > max) throw badRequest(`"${k}" must be between ${min} and ${max}, got ${v}`);
  return v;
}

function integer(b: Body, k: string, min: number, max: number): number | undefined {
  const v = number(b, k, min, max);
  if (v !== undefined && !Number.isInteger(v)) throw badRequest(`"${k}" must be an integer, got ${v}`);
  return v;
}

function boolean(b: Body, k: string): boolean | undefined {
  if (!present(b, k)) return undefined;
  if (typeof b[k] !== 'boolean') throw badRequest(`"${k}" must be true or false`);
  return b[k] as boolean;
}

function stopList(b: Body): string[] {
  if (!present(b, 'stop')) return [];
  const v = b.stop;
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string')) throw badRequest('"stop" must be a string or an array of strings');
  if (list.length > 16) throw badRequest('"stop" takes at most 16 strings');
  if ((list as string[]).some((s) => s.length > 1024)) throw badRequest('a "stop" string has more than 1024 characters');
  return (list as string[]).filter((s) => s.length > 0);
}

/** What a request asks the sampler to be constrained by, and the tools its reply may call. */
export interface Constraints {
  /** the parsed grammar (response_format json_object / json_schema, grammar, json_schema, a forced tool call) */
  grammar?: Grammar;
  /** the fewest tokens that complete it */
  minTokens?: number;
  tools?: { format: ToolFormat; defs: ToolDef[]; choice: ToolChoice };
}

function compileGrammar(gbnf: string, field: string): Pick<Constraints, 'grammar' | 'minTokens'> {
  try {
    const grammar = parseGbnf(gbnf);
    const m = new GrammarMatcher(grammar);
    return { grammar, minTokens: m.dist[m.initial]! };
  } catch (e) {
    if (e instanceof GrammarError) throw new ApiError(400, 'invalid_request_error', `"${field}": ${e.message}`, { param: field, grammar_error: e.code, ...(e.line ? { line: e.line, column: e.column } : {}), ...(e.path ? { schema_path: e.path } : {}) });
    throw e;
  }
}
function schemaGrammar(schema: unknown, field: string): string {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) throw badRequest(`"${field}" must be a JSON Schema (an object)`);
  try {
    return jsonSchemaToGrammar(schema);
  } catch (e) {
    if (e instanceof GrammarError) {
      const type = e.code === 'SCHEMA_UNSUPPORTED' ? 'not_supported_error' : 'invalid_request_error';
      throw new ApiError(400, type, `"${field}": ${e.message}`, { param: field, grammar_error: e.code, schema_path: e.path });
    }
    throw e;
  }
}

/**
 * Constrained output (llama-server's fields): response_format {type: text | json_object (optional
 * "schema") | json_schema ({json_schema: {schema}})}, grammar (GBNF), json_schema, and for chat
 * tools / tool_choice (the template must support tools). At most one grammar source.
 */
export function parseConstraints(b: Body, templateSource: string | null = null, chat = false): Constraints {
  const sources: [string, string][] = [];
  if (present(b, 'response_format')) {
    const rf = b.response_format as Body;
    if (typeof rf !== 'object' || Array.isArray(rf) || typeof rf.type !== 'string') throw badRequest('"response_format" must be an object with a "type"');
    if (rf.type === 'json_object') sources.push(['response_format', schemaGrammar(present(rf, 'schema') ? rf.schema : { type: 'object' }, 'response_format.schema')]);
    else if (rf.type === 'json_schema') {
      const js = rf.json_schema as Body;
      if (typeof js !== 'object' || js === null || Array.isArray(js)) throw badRequest('"response_format.json_schema" must be an object with a "schema"');
      if (!present(js, 'schema')) throw badRequest('"response_format.json_schema.schema" is required');
      sources.push(['response_format', schemaGrammar(js.schema, 'response_format.json_schema.schema')]);
    } else if (rf.type !== 'text') throw badRequest(`"response_format.type" must be "text", "json_object" or "json_schema", got "${rf.type}"`);
  }
  if (present(b, 'grammar')) {
    if (typeof b.grammar !== 'string') throw badRequest('"grammar" must be a GBNF string');
    sources.push(['grammar', b.grammar]);
  }
  if (present(b, 'json_schema')) sources.push(['json_schema', schemaGrammar(b.json_schema, 'json_schema')]);
  let tools: Constraints['tools'];
  if (present(b, 'tools') || present(b, 'tool_choice')) {
    if (!chat) throw badRequest('"tools" apply to /v1/chat/completions only');
    const t = parseTools(b.tools ?? [], b.tool_choice);
    if (t.choice !== 'none') {
      const format = toolFormat(templateSource);
      if (!format) throw notSupported('tools', 'need a chat template with tool calling (e.g. Qwen3, Llama 3.x; --chat-template FILE)');
      tools = { format, defs: t.tools, choice: t.choice };
      if (t.choice !== 'auto') sources.push(['tool_choice', toolCallGrammar(format, t.tools, t.choice)]);
    }
  }
  if (sources.length > 1) throw badRequest(`give one of response_format, grammar, json_schema or a forced tool_choice, not ${sources.map((x) => x[0]).join(' and ')}`);
  if (present(b, 'logit_bias')) {
    const lb = b.logit_bias;
    const empty = (Array.isArray(lb) && lb.length === 0) || (typeof lb === 'object' && !Array.isArray(lb) && Object.keys(lb as object).length === 0);
    if (!empty) throw notSupported('logit_bias');
  }
  return { ...(sources.length ? compileGrammar(sources[0]![1], sources[0]![0]) : {}), ...(tools ? { tools } : {}) };
}

/** Sampling, limits, stop and logprob fields shared by both routes. */
function common(b: Body, d: ServerDefaults): Omit<TaskSpec, 'prompt' | 'topLogprobs'> {
  const s = d.sampling;
  const limit = integer(b, 'max_completion_tokens', 0, 1e9) ?? integer(b, 'max_tokens', 0, 1e9) ?? integer(b, 'n_predict', -1, 1e9);
  let nPredict = limit ?? d.nPredict;
  if (d.nPredict >= 0 && (nPredict < 0 || nPredict > d.nPredict)) nPredict = d.nPredict;
  const seed = integer(b, 'seed', -(2 ** 53), 2 ** 53);
  const sampling: Partial<SamplerParams> = {
    temp: number(b, 'temperature', 0, 100) ?? s.temp,
    topK: integer(b, 'top_k', 0, 1e9) ?? s.topK,
    topP: number(b, 'top_p', 0, 1) ?? s.topP,
    minP: number(b, 'min_p', 0, 1) ?? s.minP,
    presencePenalty: number(b, 'presence_penalty', -2, 2) ?? s.presencePenalty,
    frequencyPenalty: number(b, 'frequency_penalty', -2, 2) ?? s.frequencyPenalty,
    repeatPenalty: number(b, 'repeat_penalty', 0, 100) ?? s.repeatPenalty,
    repeatLastN: integer(b, 'repeat_last_n', 0, 1e9) ?? s.repeatLastN,
    // -1 (llama-server's "random") or absent: the server's --seed, else random
    seed: seed !== undefined && seed !== -1 ? seed >>> 0 : s.seed,
  };
  const nKeep = integer(b, 'n_keep', -1, 1e9);
  return { nPredict, sampling, stop: stopList(b), ignoreEos: boolean(b, 'ignore_eos') ?? false, cachePrompt: boolean(b, 'cache_prompt') ?? true, ...(nKeep !== undefined ? { nKeep } : {}) };
}

function streamFlags(b: Body): { stream: boolean; includeUsage: boolean } {
  const stream = boolean(b, 'stream') ?? false;
  let includeUsage = false;
  if (present(b, 'stream_options')) {
    const so = b.stream_options;
    if (typeof so !== 'object' || Array.isArray(so)) throw badRequest('"stream_options" must be an object');
    includeUsage = boolean(so as Body, 'include_usage') ?? false;
  }
  return { stream, includeUsage };
}

function checkTokens(ids: number[], d: ServerDefaults, field: string): number[] {
  for (const t of ids) if (!Number.isInteger(t) || t < 0 || t >= d.nVocab) throw badRequest(`"${field}" holds token id ${t}, outside the vocabulary (0..${d.nVocab - 1})`);
  return ids;
}

function checkLength(p: number[], d: ServerDefaults): number[] {
  if (p.length === 0) throw badRequest('the prompt is empty');
  if (p.length >= d.nCtxSlot) throw exceedContext(p.length, d.nCtxSlot);
  return p;
}

/** `prompt` of /v1/completions: a string, token ids, a mix of both (llama-server), or an array of prompts. */
function completionPrompts(b: Body, tok: Tokenizer, d: ServerDefaults): number[][] {
  if (!present(b, 'prompt')) throw badRequest('"prompt" is required');
  const v = b.prompt;
  const text = (s: string) => tok.tokenize(s, { addSpecial: true, parseSpecial: true });
  const one = (x: unknown): number[] => {
    if (typeof x === 'string') return text(x);
    if (Array.isArray(x) && x.length > 0 && x.every((e) => typeof e === 'number' || typeof e === 'string')) {
      const out: number[] = [];
      for (const e of x) {
        if (typeof e === 'number') out.push(e);
        else out.push(...tok.tokenize(e, { addSpecial: out.length === 0, parseSpecial: true }));
      }
      return checkTokens(out, d, 'prompt');
    }
    throw badRequest('"prompt" must be a string, an array of token ids, or an array of those');
  };
  if (typeof v === 'string') return [checkLength(one(v), d)];
  if (!Array.isArray(v) || v.length === 0) throw badRequest('"prompt" must be a non-empty string or array');
  const batch = v.every((e) => Array.isArray(e)) || v.every((e) => typeof e === 'string') && v.length > 1;
  if (!batch) return [checkLength(one(v), d)];
  if (v.length > 16) throw badRequest('"prompt" takes at most 16 prompts');
  return v.map((e) => checkLength(one(e), d));
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** `messages` of /v1/chat/completions, checked the way llama-server does (test_invalid_chat_completion_req). */
export function parseMessages(b: Body): ChatMessage[] {
  if (!present(b, 'messages')) throw badRequest('"messages" is required');
  const v = b.messages;
  if (!Array.isArray(v) || v.length === 0) throw badRequest('"messages" must be a non-empty array');
  const out: ChatMessage[] = [];
  v.forEach((m, i) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw badRequest(`messages[${i}] must be an object`);
    const role = (m as Body).role, content = (m as Body).content;
    if (typeof role !== 'string') throw badRequest(`messages[${i}].role must be a string`);
    if (!ROLES.has(role)) throw badRequest(`messages[${i}].role "${role}" is not one of ${[...ROLES].join(', ')}`);
    let text: string;
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content)) {
      // typed parts: text only (llama-server joins them with newlines)
      const parts = content.map((p, j) => {
        if (typeof p !== 'object' || p === null || (p as Body).type !== 'text' || typeof (p as Body).text !== 'string') {
          const t = typeof p === 'object' && p !== null ? (p as Body).type : undefined;
          if (t === 'image_url' || t === 'input_audio') throw notSupported(`messages[${i}].content[${j}]`, `of type "${t}" is not supported (the model takes text only)`);
          throw badRequest(`messages[${i}].content[${j}] must be {"type": "text", "text": string}`);
        }
        return (p as Body).text as string;
      });
      text = parts.join('\n');
    } else if ((content === null || content === undefined) && role === 'assistant' && present(m as Body, 'tool_calls')) {
      text = '';
    } else throw badRequest(`messages[${i}].content must be a string or an array of text parts`);
    const msg: ChatMessage = { role, content: text };
    if (role === 'assistant' && present(m as Body, 'tool_calls')) msg.tool_calls = messageToolCalls((m as Body).tool_calls, i);
    if (role === 'tool' && present(m as Body, 'tool_call_id')) {
      if (typeof (m as Body).tool_call_id !== 'string') throw badRequest(`messages[${i}].tool_call_id must be a string`);
      msg.tool_call_id = (m as Body).tool_call_id;
    }
    out.push(msg);
  });
  if (out.length >= 2 && out[out.length - 1]!.role === 'assistant' && out[out.length - 2]!.role === 'assistant') {
    throw badRequest('the messages cannot end with two assistant messages');
  }
  return out;
}

/** An assistant message's tool_calls as templates read them: arguments as an object (HF's convention). */
function messageToolCalls(v: unknown, i: number): unknown[] {
  if (!Array.isArray(v)) throw badRequest(`messages[${i}].tool_calls must be an array`);
  return v.map((c, j) => {
    const f = (c as Body)?.function as Body | undefined;
    if (typeof c !== 'object' || c === null || typeof f !== 'object' || f === null || typeof f.name !== 'string') throw badRequest(`messages[${i}].tool_calls[${j}] must be {"type": "function", "function": {"name", "arguments"}}`);
    let args: unknown = f.arguments ?? {};
    if (typeof args === 'string') {
      try { args = JSON.parse(args); } catch { throw badRequest(`messages[${i}].tool_calls[${j}].function.arguments is not JSON`); }
    }
    return { id: (c as Body).id, type: 'function', function: { name: f.name, arguments: args } };
  });
}

export function parseChat(b: Body, tok: Tokenizer, fmt: ChatFormatter, d: ServerDefaults): GenerationRequest {
  const cons = parseConstraints(b, fmt.templateSource, true);
  const messages = parseMessages(b);
  const c = common(b, d);
  const logprobs = boolean(b, 'logprobs') ?? false;
  const top = integer(b, 'top_logprobs', 0, 20);
  if (top !== undefined && !logprobs) throw badRequest('"top_logprobs" needs "logprobs": true');
  const prefill = messages[messages.length - 1]!.role === 'assistant';
  let promptText: string;
  try {
    promptText = fmt.render(messages, { addGenerationPrompt: !prefill, ...(cons.tools ? { tools: templateTools(cons.tools.defs) } : {}) });
  } catch (e) {
    if (e instanceof ChatTemplateError) throw badRequest(`the chat template cannot render these messages: ${e.message}`);
    throw e;
  }
  const prompt = checkLength(tok.tokenize(promptText, { addSpecial: true, parseSpecial: true }), d);
  checkBudget(cons, c.nPredict);
  return {
    kind: 'chat', prompts: [prompt], n: integer(b, 'n', 1, 16) ?? 1, ...streamFlags(b), logprobs, promptText,
    spec: { ...c, topLogprobs: logprobs ? (top ?? 0) : -1, ...(cons.grammar ? { grammar: cons.grammar } : {}) },
    ...(cons.tools ? { tools: cons.tools } : {}),
  };
}

/** A grammar that cannot complete within the token limit is refused up front. */
function checkBudget(cons: Constraints, nPredict: number): void {
  if (cons.minTokens !== undefined && nPredict >= 0 && cons.minTokens > nPredict) {
    throw badRequest(`the grammar needs at least ${cons.minTokens} tokens to complete, more than max_tokens (${nPredict})`);
  }
}

export function parseCompletion(b: Body, tok: Tokenizer, d: ServerDefaults): GenerationRequest {
  const cons = parseConstraints(b);
  if (present(b, 'suffix')) throw notSupported('suffix');
  if (present(b, 'echo') && b.echo !== false) throw notSupported('echo');
  const c = common(b, d);
  const lp = integer(b, 'logprobs', 0, 20);
  checkBudget(cons, c.nPredict);
  return {
    kind: 'completion', prompts: completionPrompts(b, tok, d), n: integer(b, 'n', 1, 16) ?? 1, ...streamFlags(b),
    logprobs: lp !== undefined, spec: { ...c, topLogprobs: lp ?? -1, ...(cons.grammar ? { grammar: cons.grammar } : {}) },
  };
}

/** /tokenize: {content, add_special (false), parse_special (true), with_pieces (false)} */
export function parseTokenize(b: Body): { content: string; addSpecial: boolean; parseSpecial: boolean; withPieces: boolean } {
  if (typeof b.content !== 'string') throw badRequest('"content" must be a string');
  return { content: b.content, addSpecial: boolean(b, 'add_special') ?? false, parseSpecial: boolean(b, 'parse_special') ?? true, withPieces: boolean(b, 'with_pieces') ?? false };
}

/** /detokenize: {tokens: number[]} */
export function parseDetokenize(b: Body, nVocab: number): number[] {
  const t = b.tokens;
  if (!Array.isArray(t) || t.some((x) => typeof x !== 'number')) throw badRequest('"tokens" must be an array of token ids');
  for (const x of t as number[]) if (!Number.isInteger(x) || x < 0 || x >= nVocab) throw badRequest(`"tokens" holds token id ${x}, outside the vocabulary (0..${nVocab - 1})`);
  return t as number[];
}

export { ApiError };
