// `gguf-edge chat MODEL`: an interactive chat REPL. The conversation is rendered with the model's chat template
// each turn; only the tokens that differ from what is already in the KV cache are evaluated. Replies stream to
// stdout; prompts, notices and errors go to stderr. Ctrl-C stops the current reply, not the program.
// When the context fills up, the oldest turns are dropped (the system prompt is kept), or, in the middle of a
// reply, the older half of the non-system tokens is discarded and the rest re-evaluated, with a notice.
import { PHASE_HELP, SAMPLING_HELP, contextHelp, contextOptions, contextSize, kvType, num, phaseOptions, phaseSetup, samplerParams, samplingOptions } from '../options.js';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { readFileSync, existsSync } from 'node:fs';
import type { Command } from '../main.js';
import { MODEL_HELP, expandModelArgs, modelOptions, resolveModel } from '../hf.js';
import type { Tokenizer } from '../../tokenizer/index.js';
import { ChatFormatter, type ChatMessage } from '../../tokenizer/chat-template.js';

/** What the REPL needs from a generation runtime. */
export interface ChatEngine {
  readonly nCtx: number;
  /** appends tokens to the cache and computes the next-token distribution (the sampler's history is untouched) */
  evaluate(tokens: number[]): Promise<void>;
  /** the sampler's penalty history becomes exactly `tokens` (its random state goes on) */
  setHistory(tokens: number[]): void;
  /** picks the next token from the last distribution and records it in the sampler's penalty history */
  sample(): number;
  /**
   * keeps the first `keep` cached tokens, or fewer: returns how many it kept (a model with recurrent layers
   * cannot roll its state back, so anything short of the whole cache clears it)
   */
  truncate(keep: number): number;
  /** forgets everything (cache and sampler history) */
  reset(): void;
}

export interface ChatSessionOptions {
  /** tokens per reply at most; < 0: until end-of-generation or Ctrl-C */
  nPredict: number;
  stop?: string[];
  ignoreEos?: boolean;
  system?: string;
  /** notices for the user (context shifts etc.) */
  notice?: (msg: string) => void;
}

export interface ReplyResult {
  text: string;
  tokens: number[];
  stopReason: 'eog' | 'stop' | 'length' | 'interrupted';
}

const yieldToEventLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/** One conversation: history, the tokens in the engine's cache, and turn generation. */
export class ChatSession {
  messages: ChatMessage[] = [];
  system: string | undefined;
  /** tokens currently in the engine's cache */
  private cached: number[] = [];
  private readonly stops: string[];

  constructor(
    private readonly engine: ChatEngine,
    private readonly tok: Tokenizer,
    private readonly fmt: ChatFormatter,
    private readonly opts: ChatSessionOptions,
  ) {
    this.system = opts.system;
    this.stops = [...(opts.stop ?? []), ...fmt.stopStrings()].filter((s) => s.length > 0);
  }

  private notice(msg: string): void {
    this.opts.notice?.(msg);
  }

  reset(): void {
    this.messages = [];
    this.cached = [];
    this.engine.reset();
  }

  setSystem(text: string | undefined): void {
    this.system = text && text.length > 0 ? text : undefined;
  }

  conversation(): ChatMessage[] {
    return [...(this.system ? [{ role: 'system', content: this.system }] : []), ...this.messages];
  }

  save(path: string): void {
    writeFileSync(path, JSON.stringify({ system: this.system ?? null, messages: this.conversation() }, null, 2) + '\n');
  }

  private promptTokens(): number[] {
    const text = this.fmt.render(this.conversation(), { addGenerationPrompt: true });
    return this.tok.tokenize(text, { addSpecial: true, parseSpecial: true });
  }

  /** Tokens of the system prompt (and BOS) that a context shift keeps. */
  private keepCount(prompt: number[]): number {
    let keep = this.tok.addBos ? 1 : 0;
    if (this.system) {
      try {
        const sys = this.tok.tokenize(this.fmt.render([{ role: 'system', content: this.system }], { addGenerationPrompt: false }), { addSpecial: true, parseSpecial: true });
        let n = 0;
        while (n < sys.length && n < prompt.length && sys[n] === prompt[n]) n++;
        keep = Math.max(keep, n);
      } catch {
        // templates that cannot render a lone system message keep BOS only
      }
    }
    return keep;
  }

  async reply(user: string, onText: (t: string) => void, shouldStop: () => boolean = () => false): Promise<ReplyResult> {
    const nCtx = this.engine.nCtx;
    this.messages.push({ role: 'user', content: user });
    const reserve = Math.max(1, Math.floor(this.opts.nPredict >= 0 ? Math.min(this.opts.nPredict, nCtx / 2) : nCtx / 4));
    let prompt = this.promptTokens();
    // drop the oldest turns until the prompt plus room for the reply fits; the system prompt stays
    let dropped = 0;
    while (prompt.length + reserve > nCtx && this.messages.length > 1) {
      this.messages.shift();
      if (this.messages.length > 1 && this.messages[0]!.role !== 'user') this.messages.shift(), dropped++;
      dropped++;
      prompt = this.promptTokens();
    }
    if (dropped > 0) this.notice(`context full: dropped the ${dropped} oldest message(s), kept the system prompt`);
    if (prompt.length >= nCtx) {
      this.messages.pop();
      throw Object.assign(new Error(`the prompt needs ${prompt.length} tokens but the context holds ${nCtx} (raise --ctx)`), { code: 'CONTEXT' });
    }
    const nKeep = this.keepCount(prompt);

    // evaluate only what differs from the cache
    let common = 0;
    while (common < this.cached.length && common < prompt.length && this.cached[common] === prompt[common]) common++;
    if (common === prompt.length) common--; // need logits for the last prompt token
    common = this.engine.truncate(common);
    this.cached = prompt.slice(0, common);
    await this.engine.evaluate(prompt.slice(common));
    this.cached = prompt.slice();
    // the penalties see what `run` would with this conversation as its prompt: the prompt, then each sampled
    // token once (sample() records it; evaluating it later does not record it again)
    this.engine.setHistory(prompt);

    const detok = this.tok.stream({ special: false });
    const maxStop = this.stops.reduce((m, s) => Math.max(m, s.length), 0);
    let text = '';
    let pending = '';
    const tokens: number[] = [];
    let stopReason: ReplyResult['stopReason'] = 'length';
    const emit = (s: string): void => {
      if (s.length > 0) {
        text += s;
        onText(s);
      }
    };
    // returns true when a stop string was found
    const feed = (piece: string, final: boolean): boolean => {
      pending += piece;
      for (const s of this.stops) {
        const at = pending.indexOf(s);
        if (at >= 0) {
          emit(pending.slice(0, at));
          pending = '';
          return true;
        }
      }
      if (final || maxStop === 0) {
        emit(pending);
        pending = '';
        return false;
      }
      // hold back a suffix that could start a stop string
      let hold = 0;
      for (const s of this.stops) {
        for (let k = Math.min(s.length - 1, pending.length); k > hold; k--) {
          if (pending.endsWith(s.slice(0, k))) {
            hold = k;
            break;
          }
        }
      }
      emit(pending.slice(0, pending.length - hold));
      pending = pending.slice(pending.length - hold);
      return false;
    };

    for (let i = 0; this.opts.nPredict < 0 || i < this.opts.nPredict; i++) {
      await yieldToEventLoop();
      if (shouldStop()) { stopReason = 'interrupted'; break; }
      const id = this.engine.sample();
      if (!this.opts.ignoreEos && this.tok.isEog(id)) { stopReason = 'eog'; break; }
      tokens.push(id);
      if (feed(detok.push(id), false)) { stopReason = 'stop'; break; }
      if (this.cached.length + 1 > nCtx) {
        // shift: keep the system prompt, discard the older half of the rest, re-evaluate the remainder
        const nLeft = this.cached.length - nKeep;
        const nDiscard = Math.max(1, Math.floor(nLeft / 2));
        const kept = [...this.cached.slice(0, nKeep), ...this.cached.slice(nKeep + nDiscard)];
        this.notice(`context full: shifted the context, kept the first ${nKeep} token(s) (BOS and system prompt), discarded ${nDiscard} token(s)`);
        const n = this.engine.truncate(nKeep);
        await this.engine.evaluate([...kept.slice(n), id]);
        this.cached = [...kept, id];
        continue;
      }
      await this.engine.evaluate([id]);
      this.cached.push(id);
    }
    if (stopReason !== 'stop') feed(detok.flush(), true);
    this.messages.push({ role: 'assistant', content: text });
    return { text, tokens, stopReason };
  }
}

// ---- the REPL ----

export interface ReplIo {
  input: NodeJS.ReadableStream;
  /** assistant text */
  out: (s: string) => void;
  /** prompts and notices */
  err: (s: string) => void;
  interactive: boolean;
  /** lets /save write files when the input is not a terminal (a script piping commands in) */
  allowSave?: boolean;
}

const REPL_HELP = `commands:
  /reset          forget the conversation (keeps the system prompt)
  /system TEXT    set the system prompt (empty: none) and start over
  /save FILE      write the conversation as JSON (with piped input only under --allow-save)
  /help           this list
  /exit, /quit    leave (or Ctrl-D)
A line ending in \\ continues on the next line. Ctrl-C stops the current reply.`;

export async function runRepl(session: ChatSession, io: ReplIo): Promise<number> {
  const rl = createInterface({ input: io.input, output: io.interactive ? process.stderr : undefined, terminal: io.interactive, historySize: 1000 });
  let generating = false;
  let interrupted = false;
  const onInt = (): void => {
    if (generating) {
      interrupted = true;
    } else {
      io.err('\n(type /exit or press Ctrl-D to quit)\n');
      if (io.interactive) rl.prompt();
    }
  };
  rl.on('SIGINT', onInt);
  process.on('SIGINT', onInt);
  const prompt = (): void => {
    if (io.interactive) {
      rl.setPrompt('> ');
      rl.prompt();
    } else io.err('> ');
  };
  prompt();
  let buf = '';
  try {
    for await (const raw of rl) {
      let line = raw;
      if (line.endsWith('\\')) {
        buf += line.slice(0, -1) + '\n';
        if (io.interactive) { rl.setPrompt('. '); rl.prompt(); }
        continue;
      }
      line = buf + line;
      buf = '';
      const trimmed = line.trim();
      if (trimmed === '') { prompt(); continue; }
      if (trimmed.startsWith('/')) {
        const sp = trimmed.indexOf(' ');
        const cmd = sp < 0 ? trimmed : trimmed.slice(0, sp);
        const arg = sp < 0 ? '' : trimmed.slice(sp + 1).trim();
        if (cmd === '/exit' || cmd === '/quit') break;
        if (cmd === '/reset') { session.reset(); io.err('[conversation reset]\n'); prompt(); continue; }
        if (cmd === '/system') { session.setSystem(arg); session.reset(); io.err(arg ? '[system prompt set; conversation reset]\n' : '[system prompt cleared; conversation reset]\n'); prompt(); continue; }
        if (cmd === '/save') {
          if (!arg) io.err('usage: /save FILE\n');
          else if (!io.interactive && !io.allowSave) io.err('/save is off for piped input: it would let whatever feeds stdin write files (pass --allow-save to allow it)\n');
          else {
            try { session.save(arg); io.err(`[saved ${session.conversation().length} messages to ${arg}]\n`); } catch (e) { io.err(`error: ${(e as Error).message}\n`); }
          }
          prompt();
          continue;
        }
        if (cmd === '/help') { io.err(REPL_HELP + '\n'); prompt(); continue; }
        io.err(`unknown command ${cmd} (try /help)\n`);
        prompt();
        continue;
      }
      generating = true;
      interrupted = false;
      try {
        const r = await session.reply(line, io.out, () => interrupted);
        io.out('\n');
        if (r.stopReason === 'interrupted') io.err('[interrupted]\n');
      } catch (e) {
        io.out('\n');
        io.err(`error: ${(e as Error).message}\n`);
      } finally {
        generating = false;
      }
      prompt();
    }
  } finally {
    process.removeListener('SIGINT', onInt);
    rl.close();
  }
  if (!io.interactive) io.err('\n');
  return 0;
}

// ---- the command ----

const help = () => `Usage: gguf-edge chat MODEL [options]
       gguf-edge chat -hf OWNER/REPO[:QUANT|FILE] [options]

Interactive chat with MODEL using its chat template (tokenizer.chat_template), or a llama.cpp built-in format
when the file has none (ChatML by default). Replies stream to stdout; prompts and notices go to stderr.
Reads lines from standard input, so it also works with piped input.

Options:
  --system TEXT          system prompt
  --template NAME|FILE   chat template: a built-in (chatml, llama2, llama3, gemma, phi3, qwen, ...) or a Jinja file
  -n, --n-predict N      tokens per reply at most (default -1: until end of turn)
  --stop STR             stop a reply at STR (repeatable)
  --ignore-eos           do not stop at end-of-generation tokens
  --allow-save           let /save write files when stdin is not a terminal (piped input); off by default
  -h, --help             show this help

${SAMPLING_HELP}

${contextHelp()}

${PHASE_HELP}

${MODEL_HELP}

${REPL_HELP}`;


export const command: Command = {
  summary: 'interactive chat with a model (chat template, streaming, history)',
  get help() { return help(); },
  async run(args) {
    const { values, positionals } = parseArgs({
      args: expandModelArgs(args), allowPositionals: true,
      options: {
        system: { type: 'string' }, template: { type: 'string' }, 'n-predict': { type: 'string', short: 'n' },
        stop: { type: 'string', multiple: true }, 'ignore-eos': { type: 'boolean' }, 'allow-save': { type: 'boolean' },
        ...samplingOptions,
        ...contextOptions,
        ...phaseOptions,
        ...modelOptions,
      },
    });
    const path = await resolveModel(values, positionals[0]);
    const kv = kvType(values);

    const { openGguf } = await import('../../gguf/open.js');
    const { tokenizerFromGguf } = await import('../../tokenizer/index.js');
    const { loadModel } = await import('../../runtime/model.js');
    const { Context } = await import('../../runtime/context.js');
    const { createSampler } = await import('../../runtime/sampler.js');

    const file = openGguf(path);
    const tok = tokenizerFromGguf(file);
    let template = values.template;
    if (template !== undefined && existsSync(template)) template = readFileSync(template, 'utf8');
    const fmt = new ChatFormatter(tok, template);
    const setup = await phaseSetup(values);
    const model = loadModel(file, { device: setup.host });
    const nCtx = contextSize(values, model.hp.nCtxTrain);
    let { prefillDevice, decodeDevice } = setup;
    if (setup.policy === 'auto' && !prefillDevice && !decodeDevice) {
      const { pickPhaseDevices } = await import('../../sched/policy.js');
      const p = await pickPhaseDevices(model, setup.devices, setup.host, 512);
      prefillDevice = p.prefill.device; decodeDevice = p.decode.device;
      process.stderr.write(`phase policy auto: prefill on ${prefillDevice.name}, decode on ${decodeDevice.name}\n`);
    }
    const ctx = await Context.create(model, { nCtx, kvType: kv, devices: setup.devices, prefillDevice, decodeDevice, offloadMinBatch: setup.offloadMinBatch });
    const sampler = createSampler(model.hp.nVocab, samplerParams(values));
    let logits: Float32Array | null = null;
    const engine: ChatEngine = {
      nCtx,
      async evaluate(tokens) {
        if (tokens.length === 0) return;
        logits = await ctx.decode(tokens);
      },
      setHistory(tokens) {
        sampler.reset();
        for (const t of tokens) sampler.accept(t);
      },
      sample() {
        if (!logits) throw new Error('nothing evaluated yet');
        const id = sampler.sample(logits);
        sampler.accept(id);
        return id;
      },
      truncate(keep) {
        if (ctx.recurrent && keep < ctx.nPast) { ctx.clear(); return 0; }
        ctx.truncate(keep);
        return ctx.nPast;
      },
      reset() { ctx.clear(); sampler.reset(); logits = null; },
    };
    const interactive = process.stdin.isTTY === true;
    const session = new ChatSession(engine, tok, fmt, {
      nPredict: Math.floor(num(values['n-predict'], 'n-predict', -1)),
      stop: values.stop, ignoreEos: !!values['ignore-eos'], system: values.system,
      notice: (m) => process.stderr.write(`\n[${m}]\n`),
    });
    if (interactive) process.stderr.write(`chat with ${path} (template: ${fmt.name}, context ${nCtx}); /help for commands\n`);
    try {
      return await runRepl(session, {
        input: process.stdin, interactive, allowSave: !!values['allow-save'],
        out: (s) => process.stdout.write(s),
        err: (s) => process.stderr.write(s),
      });
    } finally {
      ctx.close();
      file.source.close?.();
    }
  },
};
