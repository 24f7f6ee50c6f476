// The `chat` command: the session logic with a scripted engine, and the real command driven through pipes on
// stories260K (two turns, /reset, /save, Ctrl-C mid-generation, context shift), checked against a fresh
// evaluation with the runtime's own generate().
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGguf } from '../../src/gguf/open.js';
import { tokenizerFromGguf, type Tokenizer } from '../../src/tokenizer/index.js';
import { ChatFormatter, type ChatMessage } from '../../src/tokenizer/chat-template.js';
import { ChatSession, type ChatEngine } from '../../src/cli/commands/chat.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { createSampler } from '../../src/runtime/sampler.js';
import { generate } from '../../src/runtime/generate.js';
import { getDevice } from '../../src/backends/registry.js';
import { REPO_ROOT, fixturePath } from './fixtures.js';

const MODEL = fixturePath('models', 'stories260K.gguf');
const BIN = join(REPO_ROOT, 'bin', 'gguf-edge.js');

/** An engine that replays a script of token ids and records what it was asked to evaluate. */
class ScriptedEngine implements ChatEngine {
  cache: number[] = [];
  evaluated: number[][] = [];
  private i = 0;
  /** `recurrent`: like a model with recurrent layers, the cache cannot be truncated except to empty */
  constructor(readonly nCtx: number, private readonly script: number[], private readonly recurrent = false) {}
  async evaluate(tokens: number[]): Promise<void> {
    assert.ok(this.cache.length + tokens.length <= this.nCtx, 'engine overflow');
    this.cache.push(...tokens);
    this.evaluated.push(tokens.slice());
  }
  history: number[] = [];
  setHistory(tokens: number[]): void { this.history = tokens.slice(); }
  sample(): number { const id = this.script[this.i++ % this.script.length]!; this.history.push(id); return id; }
  truncate(keep: number): number {
    this.cache.length = this.recurrent && keep < this.cache.length ? 0 : Math.min(keep, this.cache.length);
    return this.cache.length;
  }
  reset(): void { this.cache = []; }
}

function stories(): Tokenizer {
  return tokenizerFromGguf(openGguf(MODEL));
}

test('ChatSession: second turn evaluates only the new tokens; stop strings are cut and held back', async () => {
  const tok = stories();
  const fmt = new ChatFormatter(tok, 'chatml');
  const words = tok.tokenize('the cat sat STOP here');
  const eng = new ScriptedEngine(512, [...words, tok.eos!]);
  const s = new ChatSession(eng, tok, fmt, { nPredict: 50, stop: ['STOP'], system: 'Be brief.' });
  let streamed = '';
  const r1 = await s.reply('Hi', (t) => { streamed += t; });
  assert.equal(r1.stopReason, 'stop');
  assert.equal(r1.text, ' the cat sat ');
  assert.equal(streamed, r1.text);
  const firstEval = eng.evaluated[0]!;
  const prompt1 = tok.tokenize(fmt.render([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]), { addSpecial: true, parseSpecial: true });
  assert.deepEqual(firstEval, prompt1);
  // turn 2: the cache holds prompt 1 + reply tokens; only the part after the common prefix is evaluated
  eng.evaluated = [];
  await s.reply('More', () => {});
  const conv: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }, { role: 'assistant', content: ' the cat sat ' }, { role: 'user', content: 'More' }];
  const prompt2 = tok.tokenize(fmt.render(conv), { addSpecial: true, parseSpecial: true });
  assert.ok(eng.evaluated[0]!.length < prompt2.length / 2, `re-evaluated ${eng.evaluated[0]!.length} of ${prompt2.length}`);
  assert.deepEqual(eng.cache.slice(0, prompt2.length), prompt2);
  assert.equal(s.messages.length, 4);
});

test('ChatSession on a recurrent model (no partial truncate): a cache that is not a prefix of the next prompt is cleared and the conversation re-evaluated whole', async () => {
  const tok = stories();
  const fmt = new ChatFormatter(tok, 'chatml');
  // the stop string's tokens were evaluated but are not part of the conversation: the cache is no prefix of turn 2
  const eng = new ScriptedEngine(512, [...tok.tokenize('the cat sat STOP here'), tok.eos!], true);
  const s = new ChatSession(eng, tok, fmt, { nPredict: 50, stop: ['STOP'] });
  await s.reply('Hi', () => {});
  eng.evaluated = [];
  await s.reply('More', () => {});
  const conv: ChatMessage[] = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: ' the cat sat ' }, { role: 'user', content: 'More' }];
  const prompt2 = tok.tokenize(fmt.render(conv), { addSpecial: true, parseSpecial: true });
  assert.deepEqual(eng.evaluated[0], prompt2, 'the whole prompt, from an empty cache');
  assert.deepEqual(eng.cache.slice(0, prompt2.length), prompt2);
});

test('ChatSession: end-of-generation stops; interruption keeps the partial reply', async () => {
  const tok = stories();
  const fmt = new ChatFormatter(tok, 'chatml');
  const ids = tok.tokenize('Lily was happy.');
  const eng = new ScriptedEngine(512, [...ids, tok.eos!]);
  const s = new ChatSession(eng, tok, fmt, { nPredict: -1 });
  const r = await s.reply('Go', () => {});
  assert.equal(r.stopReason, 'eog');
  assert.equal(r.text, ' Lily was happy.');
  let n = 0;
  const r2 = await s.reply('Again', () => {}, () => ++n > 3);
  assert.equal(r2.stopReason, 'interrupted');
  assert.equal(r2.tokens.length, 3);
  assert.equal(s.messages[s.messages.length - 1]!.content, r2.text);
});

test('ChatSession: the sampler history of a reply is its prompt plus each sampled token once', async () => {
  const tok = stories();
  const fmt = new ChatFormatter(tok, 'chatml');
  const eng = new ScriptedEngine(512, tok.tokenize(' a b c d e f'));
  const s = new ChatSession(eng, tok, fmt, { nPredict: 6 });
  const r1 = await s.reply('Hi', () => {});
  const p1 = tok.tokenize(fmt.render([{ role: 'user', content: 'Hi' }]), { addSpecial: true, parseSpecial: true });
  assert.deepEqual(eng.history, [...p1, ...r1.tokens]);
  const r2 = await s.reply('More', () => {});
  const p2 = tok.tokenize(fmt.render(s.conversation().slice(0, 3)), { addSpecial: true, parseSpecial: true });
  assert.deepEqual(eng.history, [...p2, ...r2.tokens]);
});

test('ChatSession: context overflow drops old turns or shifts, keeping the system prompt, with a notice', async () => {
  const tok = stories();
  const fmt = new ChatFormatter(tok, 'chatml');
  const filler = tok.tokenize(' and then they played');
  const notices: string[] = [];
  const eng = new ScriptedEngine(160, filler);
  const s = new ChatSession(eng, tok, fmt, { nPredict: -1, system: 'Tell a story.', notice: (m) => notices.push(m) });
  const sysPrefix = tok.tokenize(fmt.render([{ role: 'system', content: 'Tell a story.' }], { addGenerationPrompt: false }), { addSpecial: true, parseSpecial: true });
  let n = 0;
  await s.reply('Once upon a time', () => {}, () => ++n > 300);
  assert.ok(notices.some((m) => m.includes('shifted')), notices.join('\n'));
  assert.ok(eng.cache.length <= 160);
  assert.deepEqual(eng.cache.slice(0, sysPrefix.length), sysPrefix); // the system prompt survived every shift
  // the next turn no longer fits with the long reply in history: old turns are dropped
  n = 0;
  await s.reply('What next?', () => {}, () => ++n > 5);
  assert.ok(notices.some((m) => m.includes('dropped')), notices.join('\n'));
  assert.equal(s.conversation()[0]!.role, 'system');
  assert.deepEqual(eng.cache.slice(0, sysPrefix.length), sysPrefix);
});

interface Proc {
  out: string;
  err: string;
  send(s: string): void;
  end(): void;
  waitErr(re: RegExp, count?: number): Promise<void>;
  exit: Promise<number | null>;
  kill(sig: NodeJS.Signals): void;
}

const children = new Set<ReturnType<typeof spawn>>();
after(() => { for (const p of children) p.kill('SIGKILL'); }); // a failed wait leaves no chat process behind

function startChat(args: string[]): Proc {
  const p = spawn(process.execPath, [BIN, 'chat', MODEL, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(p);
  p.on('exit', () => children.delete(p));
  const st: Proc = {
    out: '', err: '',
    send: (s) => { p.stdin.write(s); },
    end: () => { p.stdin.end(); },
    waitErr: (re, count = 1) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timeout waiting for ${re} in stderr:\n${st.err}`)), 30000);
      const check = (): void => {
        const m = st.err.match(new RegExp(re.source, 'g'));
        if (m && m.length >= count) { clearTimeout(timer); p.stderr.off('data', check); resolve(); }
      };
      p.stderr.on('data', check);
      check();
    }),
    exit: new Promise((resolve) => p.on('exit', (code) => resolve(code))),
    kill: (sig) => { p.kill(sig); },
  };
  p.stdout.on('data', (d) => { st.out += d; });
  p.stderr.on('data', (d) => { st.err += d; });
  return st;
}

async function greedyReference(conv: ChatMessage[], nPredict: number): Promise<string> {
  const file = openGguf(MODEL);
  const tok = tokenizerFromGguf(file);
  const fmt = new ChatFormatter(tok);
  const model = loadModel(file, { device: await getDevice('reference') });
  const ctx = new Context(model, { nCtx: 2048 });
  const prompt = tok.tokenize(fmt.render(conv), { addSpecial: true, parseSpecial: true });
  const res = await generate(ctx, tok, prompt, { nPredict, sampler: createSampler(model.hp.nVocab, { temp: 0 }) });
  ctx.close();
  return res.text;
}

test('chat through pipes: two turns, /reset, /save; replies equal a fresh greedy evaluation', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-chat-'));
  try {
    const save1 = join(dir, 'a.json');
    const save2 = join(dir, 'b.json');
    const c = startChat(['--temp', '0', '-n', '20', '--system', 'You tell stories.', '--allow-save']);
    await c.waitErr(/> /);
    c.send('Once upon a time\n');
    await c.waitErr(/> /, 2);
    c.send('What did Lily do?\n');
    await c.waitErr(/> /, 3);
    c.send(`/save ${save1}\n`);
    await c.waitErr(/saved 5 messages/);
    c.send('/reset\n');
    await c.waitErr(/conversation reset/);
    c.send('Tom had a ball\n');
    c.send(`/save ${save2}\n`);
    await c.waitErr(/saved 3 messages/);
    c.end();
    assert.equal(await c.exit, 0, c.err);
    const a = JSON.parse(readFileSync(save1, 'utf8')) as { messages: ChatMessage[] };
    assert.deepEqual(a.messages.map((m) => m.role), ['system', 'user', 'assistant', 'user', 'assistant']);
    const b = JSON.parse(readFileSync(save2, 'utf8')) as { messages: ChatMessage[] };
    assert.deepEqual(b.messages.map((m) => m.content).slice(0, 2), ['You tell stories.', 'Tom had a ball']);
    // every reply is what a fresh evaluation of the full rendered conversation gives (cache reuse is exact)
    assert.equal(a.messages[2]!.content, await greedyReference(a.messages.slice(0, 2), 20));
    assert.equal(a.messages[4]!.content, await greedyReference(a.messages.slice(0, 4), 20));
    assert.equal(b.messages[2]!.content, await greedyReference(b.messages.slice(0, 2), 20));
    // stdout carries the replies only
    for (const m of [a.messages[2]!, a.messages[4]!, b.messages[2]!]) assert.ok(c.out.includes(m.content));
    assert.ok(!c.out.includes('> '));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('chat through pipes: Ctrl-C stops the reply (after a context shift) and the program goes on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-chat-'));
  try {
    const save = join(dir, 'c.json');
    const c = startChat(['--temp', '0.8', '--seed', '7', '--n-predict=-1', '--ignore-eos', '--ctx', '160', '--system', 'Tell a story.', '--allow-save']);
    await c.waitErr(/> /);
    c.send('Once upon a time\n');
    await c.waitErr(/context full: shifted/);
    c.kill('SIGINT');
    await c.waitErr(/\[interrupted\]/);
    c.send(`/save ${save}\n`);
    await c.waitErr(/saved 3 messages/);
    c.send('/exit\n');
    assert.equal(await c.exit, 0, c.err);
    const saved = JSON.parse(readFileSync(save, 'utf8')) as { messages: ChatMessage[] };
    assert.equal(saved.messages[0]!.content, 'Tell a story.');
    assert.ok(saved.messages[2]!.content.length > 100);
    assert.ok(c.out.startsWith(saved.messages[2]!.content));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** `run --json` on the given prompt tokens with the given sampling flags. */
function runTokens(prompt: number[], flags: string[]): { tokens: number[]; text: string } {
  const r = spawnSync(process.execPath, [BIN, 'run', MODEL, '--prompt-tokens', prompt.join(','), '--json', ...flags], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { tokens: number[]; text: string };
}

async function chatTurns(turns: string[], flags: string[], dir: string): Promise<ChatMessage[]> {
  const save = join(dir, 'turns.json');
  const c = startChat([...flags, '--allow-save']);
  await c.waitErr(/> /);
  for (let i = 0; i < turns.length; i++) {
    c.send(turns[i] + '\n');
    await c.waitErr(/> /, i + 2);
  }
  c.send(`/save ${save}\n`);
  await c.waitErr(/saved \d+ messages/);
  c.end();
  assert.equal(await c.exit, 0, c.err);
  return (JSON.parse(readFileSync(save, 'utf8')) as { messages: ChatMessage[] }).messages;
}

// Penalties strong enough that counting a token twice (or a window half as long) changes the tokens.
const PENALTIES = ['--repeat-penalty', '1.3', '--frequency-penalty', '0.6', '--presence-penalty', '0.2', '--repeat-last-n', '24'];

test('chat samples what run samples: same seed and penalties give the same reply (real processes)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-chat-'));
  try {
    const tok = stories();
    const fmt = new ChatFormatter(tok);
    for (const seed of ['3', '11']) {
      const flags = ['--temp', '0.9', '--top-k', '0', '--top-p', '1', '--min-p', '0', '--seed', seed, ...PENALTIES, '-n', '48'];
      const [, , reply] = await chatTurns(['Once upon a time'], ['--system', 'Tell a story.', ...flags], dir);
      const prompt = tok.tokenize(fmt.render([{ role: 'system', content: 'Tell a story.' }, { role: 'user', content: 'Once upon a time' }]), { addSpecial: true, parseSpecial: true });
      const run = runTokens(prompt, flags);
      assert.ok(run.tokens.length >= 20, `seed ${seed}: run gave ${run.tokens.length} tokens`);
      assert.equal(reply!.content, run.text, `seed ${seed}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('chat turn 2 samples what run samples on the whole rendered conversation (greedy with penalties)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-chat-'));
  try {
    const tok = stories();
    const fmt = new ChatFormatter(tok);
    const flags = ['--temp', '0', ...PENALTIES, '-n', '40'];
    const msgs = await chatTurns(['Once upon a time', 'Then what?'], flags, dir);
    assert.equal(msgs.length, 4);
    for (const k of [1, 3]) {
      const prompt = tok.tokenize(fmt.render(msgs.slice(0, k)), { addSpecial: true, parseSpecial: true });
      assert.equal(msgs[k]!.content, runTokens(prompt, flags).text, `reply ${k}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('/save from piped input writes nothing without --allow-save', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-chat-'));
  try {
    const target = join(dir, 'x.json');
    const c = startChat(['--temp', '0', '-n', '4']);
    await c.waitErr(/> /);
    c.send('Hi\n');
    await c.waitErr(/> /, 2);
    c.send(`/save ${target}\n`);
    await c.waitErr(/--allow-save/);
    c.end();
    assert.equal(await c.exit, 0, c.err);
    assert.equal(existsSync(target), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
