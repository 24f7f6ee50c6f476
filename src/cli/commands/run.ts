// `gguf-edge run MODEL`: load a model, evaluate a prompt, generate tokens.
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { MODEL_HELP, expandModelArgs, modelOptions, resolveModel } from '../hf.js';
import { loadModel } from '../../api/model.js';
import { createSampler } from '../../runtime/sampler.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { structuredConstraint, type StructuredOutput, type TokenConstraint } from '../../grammar/index.js';
import { PHASE_HELP, SAMPLING_HELP, contextHelp, contextOptions, swaFull, contextSize, flashAttn, kvType, num, phaseOptions, phaseSetup, samplerParams, samplingOptions } from '../options.js';
import { Profiler } from '../../sched/profile.js';
import { pickPhaseDevices } from '../../sched/policy.js';
import { progress } from '../progress.js';

const help = () => `Usage: gguf-edge run MODEL [options]
       gguf-edge run -hf OWNER/REPO[:QUANT|FILE] [options]

Loads a GGUF model, evaluates the prompt as one batch and generates tokens.
Prints the prompt and the generated text on stdout (or one JSON object with --json);
a one-line speed summary goes to stderr.

${MODEL_HELP}

Prompt:
  -p, --prompt TEXT          prompt text (tokenized with the model's tokenizer, BOS per metadata)
  --prompt-tokens 1,2,3      prompt as token ids (no tokenization)
  --no-bos                   do not add BOS/EOS to a text prompt
  --parse-special            parse special-token text (e.g. <|im_start|>) in the prompt

Generation:
  -n, --n-predict N          tokens to generate (default 128)
  --ignore-eos               keep generating past end-of-generation tokens
  --keep N                   when the context fills, keep the first N prompt tokens (-1: the whole prompt),
                             drop the older half of the rest and go on: a context shift in place (the kept
                             keys re-rotated, as llama.cpp's K-shift; models with recurrent layers evaluate
                             the kept tokens again). Without --keep, generation stops at the context size

Structured output (one of; the output is constrained to match, and always ends complete: a token
is allowed only if the grammar can still finish within the tokens -n leaves, and generation stops
when the grammar has ended):
  --grammar-file F.gbnf      a GBNF grammar (llama.cpp's format)
  --grammar TEXT             a GBNF grammar given inline
  --json-schema F.json       a JSON Schema file (converted like llama.cpp's json-schema-to-grammar;
                             an unsupported keyword is an error)
  --json-object              any JSON value

${SAMPLING_HELP}

${contextHelp()}
  -b, --batch N              largest batch evaluated at once (default 512)

${PHASE_HELP}

Output:
  --probs K                  record the top-K next-token probabilities at every step
  --json                     print {prompt_tokens, tokens, text, probs?, timings:{load_ms, prompt_ms, gen_ms, pp_tps, tg_tps}, policy, profile?}
  --profile                  per op type x device: calls, wall ms, simulated ms; copies and bytes each way;
                             KV hand-over and cache fill; with a grammar, its time per step (checks, full
                             masks, redraws) (stderr; in the JSON as "profile" with --json)
  --trace FILE.json          write a Chrome trace-event file (Perfetto, chrome://tracing), one track per device
  -h, --help                 show this help`;


export const command: Command = {
  summary: 'generate text from a prompt',
  get help() { return help(); },
  async run(args) {
    const { values, positionals } = parseArgs({
      args: expandModelArgs(args),
      allowPositionals: true,
      options: {
        prompt: { type: 'string', short: 'p' },
        'prompt-tokens': { type: 'string' },
        'no-bos': { type: 'boolean' },
        'parse-special': { type: 'boolean' },
        'n-predict': { type: 'string', short: 'n' },
        ...samplingOptions,
        ...contextOptions,
        'ignore-eos': { type: 'boolean' },
        keep: { type: 'string' },
        grammar: { type: 'string' },
        'grammar-file': { type: 'string' },
        'json-schema': { type: 'string' },
        'json-object': { type: 'boolean' },
        batch: { type: 'string', short: 'b' },
        probs: { type: 'string' },
        json: { type: 'boolean' },
        ...phaseOptions,
        ...modelOptions,
        profile: { type: 'boolean' },
        trace: { type: 'string' },
      },
    });
    const path = await resolveModel(values, positionals[0]);
    const kv = kvType(values);
    const structured = structuredOptions(values);
    const setup = await phaseSetup(values);
    const device = setup.host;

    const tLoad = performance.now();
    const bar = progress('loading');
    const model = await loadModel(path, { device, onProgress: (p) => { if (p.phase === 'weights') bar.update(p.loaded, p.total!); } });
    bar.done();
    try {
      const tok = model.runtime.tokenizer;
      const nCtx = contextSize(values, model.contextLength);
      const nBatch = Math.floor(num(values.batch, 'batch', 512));
      let { prefillDevice, decodeDevice } = setup;
      let picked: Record<string, unknown> | undefined;
      if (setup.policy === 'auto' && !prefillDevice && !decodeDevice) {
        const p = await pickPhaseDevices(model.runtime.model, setup.devices, setup.host, nBatch);
        prefillDevice = p.prefill.device; decodeDevice = p.decode.device;
        picked = { prefill: { device: p.prefill.device.name, candidates: p.prefill.candidates }, decode: { device: p.decode.device.name, candidates: p.decode.candidates } };
        process.stderr.write(`phase policy auto: prefill on ${p.prefill.device.name}, decode on ${p.decode.device.name} (` +
          (['prefill', 'decode'] as const).map((ph) => `${ph}: ${p[ph].candidates.map((c) => `${c.device} ${(c.seconds * 1000).toFixed(2)} ms ${c.how}`).join(' vs ')}`).join('; ') + ')\n');
      }
      const profiler = values.profile || values.trace !== undefined ? new Profiler(values.trace !== undefined) : undefined;
      const mctx = await model.createContext({
        ctx: nCtx, kvType: kv, flashAttn: flashAttn(values), swaFull: swaFull(values), batch: nBatch, devices: setup.devices, prefillDevice, decodeDevice, offloadMinBatch: setup.offloadMinBatch, profiler,
      });
      const ctx = mctx.runtime;
      const loadMs = performance.now() - tLoad;

      let prompt: number[];
      if (values['prompt-tokens'] !== undefined) {
        prompt = values['prompt-tokens'].split(',').filter((s) => s.trim() !== '').map((s) => {
          const v = Number(s);
          if (!Number.isInteger(v)) throw Object.assign(new Error(`--prompt-tokens: "${s}" is not a token id`), { code: 'USAGE' });
          return v;
        });
      } else {
        prompt = tok.tokenize(values.prompt ?? '', { addSpecial: !values['no-bos'], parseSpecial: !!values['parse-special'] });
      }
      if (prompt.length === 0) throw Object.assign(new Error('the prompt is empty (give -p TEXT or --prompt-tokens)'), { code: 'USAGE' });
      const constraint = structuredConstraint(structured, tok);
      const nPredict = Math.floor(num(values['n-predict'], 'n-predict', 128));
      if (constraint && constraint.minTokens > nPredict) {
        throw Object.assign(new Error(`the grammar needs at least ${constraint.minTokens} tokens to complete but -n is ${nPredict}`), { code: 'GRAMMAR_BUDGET' });
      }
      const keepN = values.keep !== undefined ? Math.floor(num(values.keep, 'keep', -1)) : undefined;
      if (keepN !== undefined && keepN < -1) throw Object.assign(new Error(`--keep: -1 (the whole prompt) or a token count >= 0, got ${values.keep}`), { code: 'USAGE' });
      const sampler = createSampler(model.vocabSize, samplerParams(values), constraint);
      const json = !!values.json;
      if (!json) process.stdout.write(values['prompt-tokens'] !== undefined ? tok.detokenize(prompt, { removeSpecial: true }) : (values.prompt ?? ''));
      const gen = mctx.generate(prompt, {
        sampler,
        maxTokens: Math.max(0, nPredict),
        probs: values.probs !== undefined ? Math.floor(num(values.probs, 'probs', 0)) : undefined,
        ignoreEos: !!values['ignore-eos'],
        special: true,
        ...(keepN !== undefined ? { contextShift: { keep: keepN < 0 ? prompt.length : Math.min(keepN, prompt.length), notice: (m: string) => { if (!json) process.stderr.write(`\n[${m}]\n`); } } } : {}),
      });
      for await (const e of gen) if (!json && e.text.length > 0) process.stdout.write(e.text);
      const res = await gen.result;
      const policy = {
        policy: setup.policy, offload_min_batch: setup.offloadMinBatch, prefill_device: prefillDevice?.name ?? null, decode_device: decodeDevice?.name ?? null,
        devices: setup.devices.map((d) => d.name), kv_devices: ctx.kvDevices(), fallbacks: ctx.sched.fallbacks, ...(picked ? { picked } : {}),
      };
      const profile = profiler ? {
        ...profiler.report(),
        ...(constraint ? { grammar: grammarProfile(constraint, res.tokens.length) } : {}),
        kv_cache: {
          type: kv, n_ctx: ctx.nCtx, fill_tokens: ctx.nPast, fill: ctx.nPast / ctx.nCtx, bytes_per_token: ctx.kvBytesPerToken, bytes_used: ctx.nPast * ctx.kvBytesPerToken + ctx.kvRingBytes,
          swa_ring: ctx.swaRing ? { window: ctx.swaRing.window, period: ctx.swaRing.period, rows: ctx.swaRing.stride, bytes: ctx.kvRingBytes } : null, ...ctx.kvDevices(),
        },
        prompt_kv_bytes: prompt.length * ctx.kvBytesPerToken,
      } : undefined;
      if (values.trace !== undefined) writeFileSync(values.trace, profiler!.traceJson());
      const t = res.timings;
      const nGen = res.tokens.length;
      const timings = {
        load_ms: loadMs, prompt_ms: t.prompt_ms, gen_ms: t.predicted_ms,
        pp_tps: prompt.length / (t.prompt_ms / 1000), tg_tps: nGen > 1 ? (nGen - 1) / (t.predicted_ms / 1000) : 0,
      };
      if (json) {
        const out: Record<string, unknown> = { prompt_tokens: prompt, tokens: res.tokens, text: res.text };
        if (res.probs) out.probs = res.probs;
        out.timings = timings;
        out.policy = policy;
        if (profile && values.profile) out.profile = profile;
        process.stdout.write(JSON.stringify(out) + '\n');
      } else {
        process.stdout.write('\n');
        process.stderr.write(`load ${loadMs.toFixed(0)} ms | prompt ${prompt.length} tok ${timings.pp_tps.toFixed(1)} tok/s | gen ${res.tokens.length} tok ${timings.tg_tps.toFixed(1)} tok/s | ${prefillDevice || decodeDevice ? `prefill ${(prefillDevice ?? setup.devices[0]!).name}, decode ${(decodeDevice ?? setup.devices[0]!).name}` : setup.devices.map((d) => d.name).join('+')}\n`);
        if (profile && values.profile) process.stderr.write(formatProfile(profile));
      }
      return 0;
    } finally {
      await model.close();
    }
  },
};

/** --grammar / --grammar-file / --json-schema / --json-object as a structured-output request */
export function structuredOptions(v: { grammar?: string; 'grammar-file'?: string; 'json-schema'?: string; 'json-object'?: boolean }): StructuredOutput {
  const given = (['grammar', 'grammar-file', 'json-schema', 'json-object'] as const).filter((k) => v[k] !== undefined && v[k] !== false);
  if (given.length > 1) throw Object.assign(new Error(`--${given[0]} and --${given[1]}: give one structured-output option`), { code: 'USAGE' });
  const read = (f: string, what: string) => {
    try { return readFileSync(f, 'utf8'); } catch (e) { throw Object.assign(new Error(`--${what} ${f}: ${(e as Error).message}`), { code: 'USAGE' }); }
  };
  if (v.grammar !== undefined) return { grammar: v.grammar };
  if (v['grammar-file'] !== undefined) return { grammar: read(v['grammar-file'], 'grammar-file') };
  if (v['json-schema'] !== undefined) {
    const text = read(v['json-schema'], 'json-schema');
    try { return { jsonSchema: JSON.parse(text) }; } catch (e) { throw Object.assign(new Error(`--json-schema ${v['json-schema']}: not JSON (${(e as Error).message})`), { code: 'USAGE' }); }
  }
  return v['json-object'] ? { jsonObject: true } : {};
}

/** the grammar's share of a run, for --profile: everything a step does only because of the constraint
 * (the sampled-token check, the allowed-token list, the redraw over it, advancing the state); the first
 * draw over the whole vocabulary is the unconstrained sampler's own work and is not counted */
export function grammarProfile(c: TokenConstraint, steps: number) {
  const s = c.stats;
  const ms = s.ms + s.resampleMs;
  return {
    steps, checks: s.checks, full_masks: s.masks, ms, ms_per_step: steps ? ms / steps : 0,
    mask_ms: s.maskMs, redraw_ms: s.resampleMs, other_ms: s.ms - s.maskMs,
  };
}

type Profile = ReturnType<Profiler['report']> & { grammar?: ReturnType<typeof grammarProfile>; kv_cache: { fill_tokens: number; n_ctx: number; bytes_per_token: number; primary: string; copies: string[] }; prompt_kv_bytes: number };

function formatProfile(p: Profile): string {
  const f = (x: number | null) => (x === null ? '-' : x.toFixed(2));
  const lines = ['profile (per phase x op x device):', '  phase    op           device       calls    wall ms     sim ms'];
  for (const r of [...p.ops].sort((a, b) => a.phase.localeCompare(b.phase) || b.wall_ms - a.wall_ms)) {
    lines.push(`  ${r.phase.padEnd(8)} ${r.op.padEnd(12)} ${r.device.padEnd(12)} ${String(r.calls).padStart(5)} ${f(r.wall_ms).padStart(10)} ${f(r.sim_ms).padStart(10)}`);
  }
  for (const c of p.copies) lines.push(`  copies ${c.from} -> ${c.to}: ${c.count} (${c.bytes} bytes), wall ${f(c.wall_ms)} ms, sim ${f(c.sim_ms)} ms`);
  for (const [k, h] of Object.entries(p.kv_handover)) if (h.copies) lines.push(`  kv hand-over ${k}: ${h.copies} copies, ${h.bytes} bytes, wall ${f(h.wall_ms)} ms, sim ${f(h.sim_ms)} ms`);
  if (p.grammar) {
    const g = p.grammar;
    lines.push(`  grammar: ${g.steps} steps, ${g.checks} sampled-token checks, ${g.full_masks} full masks, ${f(g.ms)} ms (${g.ms_per_step.toFixed(3)} ms/step): ` +
      `masks ${f(g.mask_ms)} ms, redraws ${f(g.redraw_ms)} ms, checks and advancing ${f(g.other_ms)} ms`);
  }
  lines.push(`  kv cache: ${p.kv_cache.fill_tokens}/${p.kv_cache.n_ctx} tokens (${p.kv_cache.bytes_per_token} bytes/token) on ${p.kv_cache.primary}${p.kv_cache.copies.length > 1 ? ` (copies on ${p.kv_cache.copies.join(', ')})` : ''}`);
  return lines.join('\n') + '\n';
}
