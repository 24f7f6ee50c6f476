// `gguf-edge run MODEL`: load a model, evaluate a prompt, generate tokens.
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { openGguf } from '../../gguf/open.js';
import { loadModel } from '../../runtime/model.js';
import { Context } from '../../runtime/context.js';
import { createSampler } from '../../runtime/sampler.js';
import { generate } from '../../runtime/generate.js';
import { tokenizerFromGguf } from '../../tokenizer/index.js';
import { getDevice, deviceNames, DEFAULT_DEVICE } from '../../backends/registry.js';
import { progress } from '../progress.js';

const help = `Usage: gguf-edge run MODEL [options]

Loads a GGUF model, evaluates the prompt as one batch and generates tokens.
Prints the prompt and the generated text on stdout (or one JSON object with --json);
a one-line speed summary goes to stderr.

Prompt:
  -p, --prompt TEXT          prompt text (tokenized with the model's tokenizer, BOS per metadata)
  --prompt-tokens 1,2,3      prompt as token ids (no tokenization)
  --no-bos                   do not add BOS/EOS to a text prompt
  --parse-special            parse special-token text (e.g. <|im_start|>) in the prompt

Generation:
  -n, --n-predict N          tokens to generate (default 128)
  --temp T                   temperature; 0 = greedy (default 0.8)
  --top-k K                  top-k (default 40; 0 = off)
  --top-p P                  top-p (default 0.95; 1 = off)
  --min-p P                  min-p (default 0.05; 0 = off)
  --repeat-penalty X         repetition penalty (default 1.0 = off)
  --repeat-last-n N          tokens the penalties look back (default 64)
  --frequency-penalty X      (default 0)
  --presence-penalty X       (default 0)
  --seed S                   sampling seed (default: random)
  --ignore-eos               keep generating past end-of-generation tokens

Context:
  -c, --ctx N                KV cache size in tokens (default min(4096, training context))
  -b, --batch N              largest batch evaluated at once (default 512)
  --kv-type f16|f32          KV cache element type (default f16)
  --device NAME              compute device (${deviceNames().join(', ')}; default ${DEFAULT_DEVICE})
  -t, --threads N            threads for the cpu device (default: available cores)

Output:
  --probs K                  record the top-K next-token probabilities at every step
  --json                     print {prompt_tokens, tokens, text, probs?, timings:{load_ms, prompt_ms, gen_ms, pp_tps, tg_tps}}
  -h, --help                 show this help`;

function num(v: string | undefined, name: string, def: number): number {
  if (v === undefined) return def;
  const x = Number(v);
  if (!Number.isFinite(x)) throw Object.assign(new Error(`--${name} needs a number, got "${v}"`), { code: 'USAGE' });
  return x;
}

export const command: Command = {
  summary: 'generate text from a prompt',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        prompt: { type: 'string', short: 'p' },
        'prompt-tokens': { type: 'string' },
        'no-bos': { type: 'boolean' },
        'parse-special': { type: 'boolean' },
        'n-predict': { type: 'string', short: 'n' },
        temp: { type: 'string' },
        'top-k': { type: 'string' },
        'top-p': { type: 'string' },
        'min-p': { type: 'string' },
        'repeat-penalty': { type: 'string' },
        'repeat-last-n': { type: 'string' },
        'frequency-penalty': { type: 'string' },
        'presence-penalty': { type: 'string' },
        seed: { type: 'string' },
        'ignore-eos': { type: 'boolean' },
        ctx: { type: 'string', short: 'c' },
        batch: { type: 'string', short: 'b' },
        'kv-type': { type: 'string' },
        device: { type: 'string' },
        threads: { type: 'string', short: 't' },
        probs: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const path = positionals[0];
    if (!path) throw Object.assign(new Error('missing MODEL argument (see --help)'), { code: 'USAGE' });
    const kvType = values['kv-type'] ?? 'f16';
    if (kvType !== 'f16' && kvType !== 'f32') throw Object.assign(new Error(`--kv-type must be f16 or f32, got "${kvType}"`), { code: 'USAGE' });
    const threads = values.threads !== undefined ? Math.max(1, Math.floor(num(values.threads, 'threads', 1))) : undefined;
    const device = await getDevice(values.device ?? DEFAULT_DEVICE, { threads });

    const tLoad = performance.now();
    const file = openGguf(path);
    const bar = progress('loading');
    const model = loadModel(file, { device, onProgress: (d, t) => bar.update(d, t) });
    bar.done();
    const tok = tokenizerFromGguf(file);
    const nCtx = Math.floor(num(values.ctx, 'ctx', Math.min(4096, model.hp.nCtxTrain)));
    const ctx = new Context(model, { nCtx, kvType, nBatch: Math.floor(num(values.batch, 'batch', 512)) });
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
    const seed = values.seed !== undefined ? num(values.seed, 'seed', 0) >>> 0 : undefined;
    const sampler = createSampler(model.hp.nVocab, {
      temp: num(values.temp, 'temp', 0.8),
      topK: num(values['top-k'], 'top-k', 40),
      topP: num(values['top-p'], 'top-p', 0.95),
      minP: num(values['min-p'], 'min-p', 0.05),
      repeatPenalty: num(values['repeat-penalty'], 'repeat-penalty', 1),
      repeatLastN: num(values['repeat-last-n'], 'repeat-last-n', 64),
      frequencyPenalty: num(values['frequency-penalty'], 'frequency-penalty', 0),
      presencePenalty: num(values['presence-penalty'], 'presence-penalty', 0),
      seed,
    });
    const json = !!values.json;
    if (!json) process.stdout.write(values['prompt-tokens'] !== undefined ? tok.detokenize(prompt, { removeSpecial: true }) : (values.prompt ?? ''));
    const res = await generate(ctx, tok, prompt, {
      nPredict: Math.floor(num(values['n-predict'], 'n-predict', 128)),
      sampler,
      probs: values.probs !== undefined ? Math.floor(num(values.probs, 'probs', 0)) : undefined,
      stopAtEog: !values['ignore-eos'],
      onText: json ? undefined : (t) => process.stdout.write(t),
    });
    const timings = { load_ms: loadMs, prompt_ms: res.timings.prompt_ms, gen_ms: res.timings.gen_ms, pp_tps: res.timings.pp_tps, tg_tps: res.timings.tg_tps };
    if (json) {
      const out: Record<string, unknown> = { prompt_tokens: prompt, tokens: res.tokens, text: res.text };
      if (res.probs) out.probs = res.probs;
      out.timings = timings;
      process.stdout.write(JSON.stringify(out) + '\n');
    } else {
      process.stdout.write('\n');
      process.stderr.write(`load ${loadMs.toFixed(0)} ms | prompt ${prompt.length} tok ${res.timings.pp_tps.toFixed(1)} tok/s | gen ${res.tokens.length} tok ${res.timings.tg_tps.toFixed(1)} tok/s | ${device.name}\n`);
    }
    ctx.close();
    file.source.close?.();
    return 0;
  },
};
