// `gguf-edge run MODEL`: load a model, evaluate a prompt, generate tokens.
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { openGguf } from '../../gguf/open.js';
import { loadModel } from '../../runtime/model.js';
import { Context } from '../../runtime/context.js';
import { createSampler } from '../../runtime/sampler.js';
import { generate } from '../../runtime/generate.js';
import { tokenizerFromGguf } from '../../tokenizer/index.js';
import { SAMPLING_HELP, contextHelp, contextOptions, contextSize, deviceFrom, kvType, num, samplerParams, samplingOptions } from '../options.js';
import { progress } from '../progress.js';

const help = () => `Usage: gguf-edge run MODEL [options]

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
  --ignore-eos               keep generating past end-of-generation tokens

${SAMPLING_HELP}

${contextHelp()}
  -b, --batch N              largest batch evaluated at once (default 512)

Output:
  --probs K                  record the top-K next-token probabilities at every step
  --json                     print {prompt_tokens, tokens, text, probs?, timings:{load_ms, prompt_ms, gen_ms, pp_tps, tg_tps}}
  -h, --help                 show this help`;


export const command: Command = {
  summary: 'generate text from a prompt',
  get help() { return help(); },
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
        ...samplingOptions,
        ...contextOptions,
        'ignore-eos': { type: 'boolean' },
        batch: { type: 'string', short: 'b' },
        probs: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const path = positionals[0];
    if (!path) throw Object.assign(new Error('missing MODEL argument (see --help)'), { code: 'USAGE' });
    const kv = kvType(values);
    const device = await deviceFrom(values);

    const tLoad = performance.now();
    const file = openGguf(path);
    const bar = progress('loading');
    const model = loadModel(file, { device, onProgress: (d, t) => bar.update(d, t) });
    bar.done();
    const tok = tokenizerFromGguf(file);
    const nCtx = contextSize(values, model.hp.nCtxTrain);
    const ctx = new Context(model, { nCtx, kvType: kv, nBatch: Math.floor(num(values.batch, 'batch', 512)) });
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
    const sampler = createSampler(model.hp.nVocab, samplerParams(values));
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
