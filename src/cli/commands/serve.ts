// `gguf-edge serve MODEL`: an OpenAI-compatible HTTP server with llama-server's flags and routes where they
// overlap. --parallel N slots share one loaded model (continuous batching, src/server/engine.ts).
import { parseArgs } from 'node:util';
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { Command } from '../main.js';
import { PHASE_HELP, SAMPLING_HELP, contextHelp, contextOptions, swaFull, flashAttn, kvType, num, phaseOptions, phaseSetup, samplerParams, samplingOptions, usage } from '../options.js';
import { progress } from '../progress.js';
import { MODEL_HELP, expandModelArgs, modelOptions, resolveModel } from '../hf.js';
import { defaultSamplerParams } from '../../runtime/sampler.js';

const help = () => `Usage: gguf-edge serve MODEL [options]
       gguf-edge serve -hf OWNER/REPO[:QUANT|FILE] [options]
       gguf-edge serve --synthetic SHAPE:TYPE [options]

An OpenAI-compatible HTTP server (llama-server's routes and flags where they overlap). Routes, each also
without the /v1 prefix:
  POST /v1/chat/completions   messages -> reply (chat template of the model; ChatML when it has none)
  POST /v1/completions        prompt (string, token ids, or an array of prompts) -> text
  GET  /v1/models             the loaded model (id = --alias, else the file name)
  GET  /health                503 while loading, 200 {"status":"ok"} when ready
  GET  /metrics               Prometheus text: requests, tokens, queue depth, slot use, TTFT histogram
  POST /tokenize, /detokenize {content, add_special, parse_special, with_pieces} / {tokens}
  POST /apply-template        {messages} -> {prompt}: the rendered chat prompt
  GET  /props, /slots         generation settings, slots (per-slot context = ctx / parallel)
Request fields: messages, prompt, max_tokens / max_completion_tokens, temperature, top_p, top_k, min_p,
seed, stop, presence_penalty, frequency_penalty, logprobs / top_logprobs, n, stream (with
stream_options.include_usage), ignore_eos, cache_prompt. Structured output: response_format
({type: json_object [, schema]} or {type: json_schema, json_schema: {schema}}), grammar (GBNF), json_schema;
chat: tools / tool_choice (none, auto, required, {type: function, function: {name}}) with a chat template
that has tool calls (Qwen-style <tool_call> or Llama 3.x JSON; see --chat-template): calls come back in
message.tool_calls. Errors: {"error": {"code", "message", "type"}}.

Server:
  --host ADDR                address to listen on (default 127.0.0.1: loopback only)
  --port N                   port (default 8080; 0 = any free port, printed on stderr)
  --api-key KEY              require "Authorization: Bearer KEY" (or X-Api-Key) on every route but
                             /health and /models (repeatable: any of the keys); 401 otherwise
  --alias NAME               model name reported by /v1/models and in responses
  --cors ORIGIN              allow browser requests from ORIGIN (repeatable; * = any); off by default
  --max-queue N              requests waiting for a slot at most (default 64); beyond: 503 + Retry-After
  --max-body BYTES           request body limit (default 4194304); beyond: 413
  -to, --timeout SECONDS     read timeout of a request and write timeout of a stalled response
                             (default 600, as llama-server); a client that stalls longer is dropped
  --no-slots                 GET /slots answers 501 (as llama-server's --no-slots)
  --chat-template NAME|FILE  a built-in chat format (chatml, llama2, llama3, gemma, phi3, qwen, ...) or a
                             Jinja file, instead of the model's template

Slots and generation:
  -c, --ctx-size N           KV cache size in tokens over all slots (default min(4096, training context));
                             each slot holds ctx / parallel
  -np, --parallel N          slots: requests generated at once (default 1), batched into one evaluation per step
  -n, --n-predict N          default and cap of every request's token limit (default -1: none)
  -b, --batch-size N         tokens evaluated per step at most: every generating slot's next token, then
                             prompt chunks (default 512)
  -cb, --cont-batching       accepted for llama-server's command lines (continuous batching is always on)
  --prefill-chunk N          prompt tokens per step at most while other slots generate, so running streams
                             keep flowing (default 128)
  --context-shift            a slot whose context fills keeps the request's n_keep prompt tokens (default 0;
                             -1: all), forgets half of the rest and goes on, in place (llama-server's
                             --context-shift; the kept keys re-rotated, nothing evaluated again; models with
                             recurrent layers cannot and finish 'length'). Default: the request finishes 'length'

${SAMPLING_HELP}
  (the defaults of every request; request fields override them)

${contextHelp().replace(/\n  -c, --ctx N[^\n]*/, '')}

${PHASE_HELP}

${MODEL_HELP}
  --synthetic SHAPE:TYPE     serve a random-weight model with a real published shape (as bench does)

  -h, --help                 show this help`;

/** llama-server's multi-letter short flags, which parseArgs cannot take */
const ALIASES: Record<string, string> = { '-np': '--parallel', '-to': '--timeout', '-cb': '--cont-batching', '--ctx': '--ctx-size' };
// -c is --ctx-size here (llama-server's name), so the shared --ctx option is not taken
const { ctx: _ctx, ...deviceOptions } = contextOptions;

export const command: Command = {
  summary: 'OpenAI-compatible HTTP server (llama-server routes, continuous batching)',
  get help() { return help(); },
  async run(args) {
    const { values, positionals } = parseArgs({
      args: expandModelArgs(args).map((a) => ALIASES[a] ?? a),
      allowPositionals: true,
      options: {
        host: { type: 'string' }, port: { type: 'string' }, 'api-key': { type: 'string', multiple: true },
        alias: { type: 'string' }, cors: { type: 'string', multiple: true }, 'max-queue': { type: 'string' },
        'max-body': { type: 'string' }, timeout: { type: 'string' }, 'no-slots': { type: 'boolean' },
        'chat-template': { type: 'string' }, 'context-shift': { type: 'boolean' }, 'ctx-size': { type: 'string', short: 'c' }, parallel: { type: 'string' },
        'n-predict': { type: 'string', short: 'n' }, 'batch-size': { type: 'string', short: 'b' },
        'cont-batching': { type: 'boolean' }, 'prefill-chunk': { type: 'string' }, synthetic: { type: 'string' },
        ...samplingOptions, ...deviceOptions, ...phaseOptions, ...modelOptions,
      },
    });
    const int = (v: unknown, name: string, def: number, min: number) => {
      const x = num(v, name, def);
      if (!Number.isInteger(x) || x < min) throw usage(`--${name} needs an integer >= ${min}, got "${String(v)}"`);
      return x;
    };
    const host = values.host ?? '127.0.0.1';
    const port = int(values.port, 'port', 8080, 0);
    if (port > 65535) throw usage(`--port must be at most 65535, got ${port}`);
    const nParallel = int(values.parallel, 'parallel', 1, 1);
    const nPredict = int(values['n-predict'], 'n-predict', -1, -1);
    const nBatch = int(values['batch-size'], 'batch-size', 512, 1);
    const maxQueue = int(values['max-queue'], 'max-queue', 64, 0);
    const prefillChunk = int(values['prefill-chunk'], 'prefill-chunk', 128, 1);
    const maxBody = int(values['max-body'], 'max-body', 4 * 1024 * 1024, 1);
    const timeoutMs = num(values.timeout, 'timeout', 600) * 1000;
    if (!(timeoutMs > 0)) throw usage('--timeout must be a positive number of seconds');
    const kv = kvType(values);
    const sampling = { ...defaultSamplerParams, ...samplerParams(values) };
    const apiKeys = (values['api-key'] ?? []).filter((k) => k.length > 0);
    let template = values['chat-template'];
    if (template !== undefined && existsSync(template) && statSync(template).isFile()) template = readFileSync(template, 'utf8');

    let path = positionals[0];
    if (values.synthetic !== undefined) {
      if (path) throw usage('give either MODEL or --synthetic, not both');
      const { parseSyntheticSpec } = await import('../../bench/shapes.js');
      const { syntheticModel } = await import('../../bench/synthetic.js');
      const { shape, type } = parseSyntheticSpec(values.synthetic);
      const bar = progress(`building synthetic ${shape.name}:${type}`);
      path = syntheticModel(shape.name, type, { onProgress: (d, t) => bar.update(d, t) }).path;
      bar.done();
    }
    // -hf OWNER/REPO[:QUANT|FILE] as llama-server's: fetched into the cache first (src/cli/hf.ts)
    if (values['hf-repo'] !== undefined || values.verify || values.sha256 !== undefined) path = await resolveModel(values, path);
    if (!path) throw usage('missing MODEL argument, -hf REPO or --synthetic SHAPE:TYPE (see --help)');
    const setup = await phaseSetup(values);
    const { basename } = await import('node:path');
    const { startHttp } = await import('../../server/http.js');
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string };
    const state: import('../../server/routes.js').ServerState = {
      alias: values.alias ?? (values.synthetic ?? basename(path)), modelPath: path, nCtx: 0, nParallel,
      slotsEndpoint: !values['no-slots'], buildInfo: `b${pkg.version}-gguf-edge`, created: Math.floor(Date.now() / 1000),
    };
    // listen first: /health answers 503 while the model loads
    const server = await startHttp(state, { host, port, apiKeys, cors: values.cors ?? [], maxBodyBytes: maxBody, timeoutMs });
    const addr = server.address();
    const shown = typeof addr === 'object' && addr ? `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : String(addr);
    process.stderr.write(`gguf-edge serve: listening on ${shown}\n`);

    const { loadModel } = await import('../../api/model.js');
    const { Engine } = await import('../../server/engine.js');
    const { createSeqContext } = await import('../../server/seq-context.js');
    let closeAll: () => void | Promise<void> = () => { server.close(); };
    try {
      const bar = progress('loading');
      // the library API loads the model (tokenizer, chat templates); the server drives the runtime below it
      const api = await loadModel(path, { device: setup.host, onProgress: (p) => { if (p.phase === 'weights' && p.total) bar.update(p.loaded, p.total); } });
      bar.done();
      const { model, tokenizer: tok, file } = api.runtime;
      const fmt = api.chatFormatter(template);
      const nCtx = int(values['ctx-size'], 'ctx-size', Math.min(4096, api.contextLength), 1);
      if (Math.floor(nCtx / nParallel) < 2) throw usage(`--ctx-size ${nCtx} over --parallel ${nParallel} leaves fewer than 2 tokens per slot`);
      const ctx = await createSeqContext(model, { nCtx, nSeq: nParallel, kvType: kv, flashAttn: flashAttn(values), swaFull: swaFull(values), nBatch, devices: setup.devices, prefillDevice: setup.prefillDevice, decodeDevice: setup.decodeDevice, offloadMinBatch: setup.offloadMinBatch });
      const engine = new Engine(ctx, tok, { nBatch, maxQueue, prefillChunk, contextShift: !!values['context-shift'] });
      let nParams = 0;
      for (const t of file.tensors) nParams += t.nElements;
      const vocabType = { spm: 1, bpe: 2, wpm: 3 }[tok.vocab.type as string] ?? 0;
      state.nCtx = nCtx;
      state.serving = {
        engine, tok, fmt,
        defaults: { sampling, nPredict, nCtxSlot: ctx.nCtxSeq, nVocab: model.hp.nVocab },
        meta: { vocab_type: vocabType, n_vocab: model.hp.nVocab, n_ctx_train: model.hp.nCtxTrain, n_embd: model.hp.nEmbd, n_params: nParams, size: model.weightBytes },
      };
      closeAll = async () => {
        server.close();
        server.closeAllConnections();
        await engine.shutdown(); // the step in flight ends before the context goes
        ctx.close();
        await api.close();
      };
      if (process.stderr.isTTY) process.stderr.write(`model loaded: ${nParallel} slot(s) x ${ctx.nCtxSeq} tokens, ${setup.host.name}\n`);
    } catch (e) {
      server.close();
      server.closeAllConnections();
      throw e;
    }
    // serve until SIGINT / SIGTERM
    await new Promise<void>((resolve) => {
      const stop = () => { process.off('SIGINT', stop); process.off('SIGTERM', stop); resolve(); };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    await closeAll();
    return 0;
  },
};
