// `gguf-edge chat MODEL`: an interactive chat REPL. The conversation is rendered with the model's chat template
// each turn; only the tokens that differ from what is already in the KV cache are evaluated. Replies stream to
// stdout; prompts, notices and errors go to stderr. Ctrl-C stops the current reply, not the program.
// When the context fills up, the oldest turns are dropped (the system prompt is kept), or, in the middle of a
// reply, the older half of the non-system tokens is discarded and the rest re-evaluated, with a notice.
import { PHASE_HELP, SAMPLING_HELP, contextHelp, contextOptions, swaFull, contextSize, flashAttn, kvType, num, phaseOptions, phaseSetup, samplerParams, samplingOptions } from '../options.js';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { readFileSync, existsSync } from 'node:fs';
import type { Command } from '../main.js';
import { MODEL_HELP, expandModelArgs, modelOptions, resolveModel } from '../hf.js';
import type { Tokenizer } from '../../tokenizer/index.js';
import { ChatFormatter } from '../../tokenizer/chat-template.js';
import { ChatSession as LibraryChatSession } from '../../api/chat-session.js';
import { ModelContext } from '../../api/context.js';
import { EngineContext } from '../../api/engine-context.js';
import type { Engine } from '../../api/generation.js';
import { samplingOptions as librarySampling, type SamplingOptions } from '../../api/sampling.js';

/** What the REPL needs from a generation runtime (the library's Engine). */
export type ChatEngine = Engine;

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
  /** the reply's tokens (an end-of-generation token not included) */
  tokens: number[];
  stopReason: 'eog' | 'stop' | 'length' | 'interrupted';
}

/** The library's ChatSession (src/api/chat-session.ts) with the REPL's reply() and /save. */
export class ChatSession extends LibraryChatSession {
  constructor(target: ChatEngine | ModelContext, tok: Tokenizer, fmt: ChatFormatter, opts: ChatSessionOptions, sampling: SamplingOptions = {}) {
    super(target instanceof ModelContext ? target : new EngineContext(target, tok), {
      ...sampling, formatter: fmt, maxTokens: opts.nPredict < 0 ? undefined : opts.nPredict,
      stop: opts.stop, ignoreEos: opts.ignoreEos, system: opts.system, onNotice: opts.notice,
    });
  }

  save(path: string): void {
    writeFileSync(path, JSON.stringify({ system: this.system ?? null, messages: this.conversation() }, null, 2) + '\n');
  }

  /** One turn: streams the reply's text to onText; shouldStop is asked before every token (Ctrl-C). */
  async reply(user: string, onText: (t: string) => void, shouldStop: () => boolean = () => false): Promise<ReplyResult> {
    // a signal that asks shouldStop each time the generation checks it
    const signal = { get aborted() { return shouldStop(); } } as AbortSignal;
    const g = this.send(user, { signal });
    for await (const e of g) if (e.text.length > 0) onText(e.text);
    const r = await g.result;
    const tokens = r.stoppedBy === 'eog' ? r.tokens.slice(0, -1) : r.tokens;
    const stopReason = r.finishReason === 'abort' ? 'interrupted' : r.stoppedBy === 'eog' ? 'eog' : r.finishReason === 'stop' ? 'stop' : 'length';
    return { text: r.text, tokens, stopReason };
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

    const { loadModel } = await import('../../api/model.js');
    const setup = await phaseSetup(values);
    const model = await loadModel(path, { device: setup.host });
    try {
      const tok = model.runtime.tokenizer;
      let template = values.template;
      if (template !== undefined && existsSync(template)) template = readFileSync(template, 'utf8');
      const fmt = new ChatFormatter(tok, template);
      const nCtx = contextSize(values, model.contextLength);
      let { prefillDevice, decodeDevice } = setup;
      if (setup.policy === 'auto' && !prefillDevice && !decodeDevice) {
        const { pickPhaseDevices } = await import('../../sched/policy.js');
        const p = await pickPhaseDevices(model.runtime.model, setup.devices, setup.host, 512);
        prefillDevice = p.prefill.device; decodeDevice = p.decode.device;
        process.stderr.write(`phase policy auto: prefill on ${prefillDevice.name}, decode on ${decodeDevice.name}\n`);
      }
      const ctx = await model.createContext({ ctx: nCtx, kvType: kv, flashAttn: flashAttn(values), swaFull: swaFull(values), devices: setup.devices, prefillDevice, decodeDevice, offloadMinBatch: setup.offloadMinBatch });
      const interactive = process.stdin.isTTY === true;
      const session = new ChatSession(ctx, tok, fmt, {
        nPredict: Math.floor(num(values['n-predict'], 'n-predict', -1)),
        stop: values.stop, ignoreEos: !!values['ignore-eos'], system: values.system,
        notice: (m) => process.stderr.write(`\n[${m}]\n`),
      }, librarySampling(samplerParams(values)));
      if (interactive) process.stderr.write(`chat with ${path} (template: ${fmt.name}, context ${nCtx}); /help for commands\n`);
      return await runRepl(session, {
        input: process.stdin, interactive, allowSave: !!values['allow-save'],
        out: (s) => process.stdout.write(s),
        err: (s) => process.stderr.write(s),
      });
    } finally {
      await model.close();
    }
  },
};
