// Chat templates: render the model's tokenizer.chat_template (Jinja) with @huggingface/jinja, or one of
// llama.cpp's built-in formats (llama-chat.cpp) when the file carries no template or one is asked for by name.
import { Template } from '@huggingface/jinja';

export interface ChatMessage {
  role: string;
  content: string;
  [key: string]: unknown;
}

export interface RenderOptions {
  /** end with the opening of an assistant turn */
  addGenerationPrompt?: boolean;
  /** tool (function) definitions, for templates that support them */
  tools?: unknown[];
  bosToken?: string;
  eosToken?: string;
  /** other template variables (e.g. enable_thinking) */
  extra?: Record<string, unknown>;
}

export class ChatTemplateError extends Error {
  readonly code = 'E_CHAT_TEMPLATE';
  constructor(message: string) {
    super(message);
    this.name = 'ChatTemplateError';
  }
}

const templateCache = new Map<string, Template>();

/** Render a Jinja chat template the way transformers' apply_chat_template does. */
export function renderJinja(source: string, messages: ChatMessage[], opts: RenderOptions = {}): string {
  let t = templateCache.get(source);
  if (!t) {
    try {
      t = new Template(source);
    } catch (e) {
      throw new ChatTemplateError(`cannot parse chat template: ${(e as Error).message}`);
    }
    templateCache.set(source, t);
  }
  const vars: Record<string, unknown> = {
    messages,
    add_generation_prompt: opts.addGenerationPrompt ?? true,
    bos_token: opts.bosToken ?? '',
    eos_token: opts.eosToken ?? '',
    ...opts.extra,
  };
  if (opts.tools && opts.tools.length > 0) vars.tools = opts.tools;
  try {
    return t.render(vars);
  } catch (e) {
    if (e instanceof ChatTemplateError) throw e;
    throw new ChatTemplateError(`cannot render chat template: ${(e as Error).message}`);
  }
}

// ---- llama.cpp built-in templates ----

export const BUILTIN_TEMPLATES = [
  'chatml', 'llama2', 'llama2-sys', 'llama2-sys-bos', 'llama2-sys-strip', 'llama3', 'gemma', 'phi3', 'phi4', 'zephyr',
  'vicuna', 'vicuna-orca', 'deepseek', 'deepseek2', 'deepseek3', 'command-r', 'mistral-v7', 'llama4', 'granite',
] as const;
export type BuiltinTemplate = (typeof BUILTIN_TEMPLATES)[number];

/** Names accepted for built-ins, including aliases (qwen models use ChatML). */
export function builtinByName(name: string): BuiltinTemplate | null {
  if (name === 'qwen' || name === 'qwen2' || name === 'qwen3') return 'chatml';
  return (BUILTIN_TEMPLATES as readonly string[]).includes(name) ? (name as BuiltinTemplate) : null;
}

const trim = (s: string): string => s.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '');

/** llama.cpp's llm_chat_detect_template heuristics (the common subset). */
export function detectBuiltin(tmpl: string): BuiltinTemplate | null {
  const byName = builtinByName(tmpl);
  if (byName) return byName;
  const has = (s: string): boolean => tmpl.includes(s);
  if (has('<|im_start|>')) return has('<|im_sep|>') ? 'phi4' : 'chatml';
  if (tmpl.startsWith('mistral') || has('[INST]')) {
    if (has('[SYSTEM_PROMPT]')) return 'mistral-v7';
    if (has('content.strip()')) return 'llama2-sys-strip';
    if (has("bos_token + '[INST]")) return 'llama2-sys-bos';
    if (has('<<SYS>>')) return 'llama2-sys';
    return 'llama2';
  }
  if (has('<|assistant|>') && has('<|end|>')) return 'phi3';
  if (has('<|user|>') && has('<|endoftext|>')) return 'zephyr';
  if (has('<start_of_turn>')) return 'gemma';
  if (has('USER: ') && has('ASSISTANT: ')) return has('SYSTEM: ') ? 'vicuna-orca' : 'vicuna';
  if (has('### Instruction:') && has('<|EOT|>')) return 'deepseek';
  if (has('<|START_OF_TURN_TOKEN|>') && has('<|USER_TOKEN|>')) return 'command-r';
  if (has('<|start_header_id|>') && has('<|end_header_id|>')) return 'llama3';
  if (has("'Assistant: ' + message['content'] + eos_token")) return 'deepseek2';
  if (has('<｜Assistant｜>') && has('<｜User｜>') && has('<｜end▁of▁sentence｜>')) return 'deepseek3';
  if (has('<|start_of_role|>')) return 'granite';
  if (has('<|header_start|>') && has('<|header_end|>')) return 'llama4';
  return null;
}

/** Render one of llama.cpp's built-in formats (llm_chat_apply_template). */
export function renderBuiltin(tmpl: BuiltinTemplate, chat: ChatMessage[], addAss = true): string {
  let ss = '';
  switch (tmpl) {
    case 'chatml':
      for (const m of chat) ss += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
      if (addAss) ss += '<|im_start|>assistant\n';
      break;
    case 'mistral-v7':
      for (const m of chat) {
        if (m.role === 'system') ss += `[SYSTEM_PROMPT] ${m.content}[/SYSTEM_PROMPT]`;
        else if (m.role === 'user') ss += `[INST] ${m.content}[/INST]`;
        else ss += ` ${m.content}</s>`;
      }
      break;
    case 'llama2': case 'llama2-sys': case 'llama2-sys-bos': case 'llama2-sys-strip': {
      const sys = tmpl !== 'llama2';
      const bosInside = tmpl === 'llama2-sys-bos';
      const strip = tmpl === 'llama2-sys-strip';
      let inside = true;
      ss += '[INST] ';
      for (const m of chat) {
        const content = strip ? trim(m.content) : m.content;
        if (!inside) {
          inside = true;
          ss += bosInside ? '<s>[INST] ' : '[INST] ';
        }
        if (m.role === 'system') ss += sys ? `<<SYS>>\n${content}\n<</SYS>>\n\n` : `${content}\n`;
        else if (m.role === 'user') ss += `${content} [/INST]`;
        else {
          ss += `${content}</s>`;
          inside = false;
        }
      }
      break;
    }
    case 'phi3':
      for (const m of chat) ss += `<|${m.role}|>\n${m.content}<|end|>\n`;
      if (addAss) ss += '<|assistant|>\n';
      break;
    case 'phi4':
      for (const m of chat) ss += `<|im_start|>${m.role}<|im_sep|>${m.content}<|im_end|>`;
      if (addAss) ss += '<|im_start|>assistant<|im_sep|>';
      break;
    case 'zephyr':
      for (const m of chat) ss += `<|${m.role}|>\n${m.content}<|endoftext|>\n`;
      if (addAss) ss += '<|assistant|>\n';
      break;
    case 'gemma': {
      let system = '';
      for (const m of chat) {
        if (m.role === 'system') {
          system += trim(m.content);
          continue;
        }
        const role = m.role === 'assistant' ? 'model' : m.role;
        ss += `<start_of_turn>${role}\n`;
        if (system && role !== 'model') {
          ss += `${system}\n\n`;
          system = '';
        }
        ss += `${trim(m.content)}<end_of_turn>\n`;
      }
      if (addAss) ss += '<start_of_turn>model\n';
      break;
    }
    case 'vicuna': case 'vicuna-orca':
      for (const m of chat) {
        if (m.role === 'system') ss += tmpl === 'vicuna-orca' ? `SYSTEM: ${m.content}\n` : `${m.content}\n\n`;
        else if (m.role === 'user') ss += `USER: ${m.content}\n`;
        else if (m.role === 'assistant') ss += `ASSISTANT: ${m.content}</s>\n`;
      }
      if (addAss) ss += 'ASSISTANT:';
      break;
    case 'deepseek':
      for (const m of chat) {
        if (m.role === 'system') ss += m.content;
        else if (m.role === 'user') ss += `### Instruction:\n${m.content}\n`;
        else if (m.role === 'assistant') ss += `### Response:\n${m.content}\n<|EOT|>\n`;
      }
      if (addAss) ss += '### Response:\n';
      break;
    case 'deepseek2':
      for (const m of chat) {
        if (m.role === 'system') ss += `${m.content}\n\n`;
        else if (m.role === 'user') ss += `User: ${m.content}\n\n`;
        else if (m.role === 'assistant') ss += `Assistant: ${m.content}<｜end▁of▁sentence｜>`;
      }
      if (addAss) ss += 'Assistant:';
      break;
    case 'deepseek3':
      for (const m of chat) {
        if (m.role === 'system') ss += `${m.content}\n\n`;
        else if (m.role === 'user') ss += `<｜User｜>${m.content}`;
        else if (m.role === 'assistant') ss += `<｜Assistant｜>${m.content}<｜end▁of▁sentence｜>`;
      }
      if (addAss) ss += '<｜Assistant｜>';
      break;
    case 'command-r':
      for (const m of chat) {
        const tag = m.role === 'system' ? 'SYSTEM' : m.role === 'user' ? 'USER' : m.role === 'assistant' ? 'CHATBOT' : null;
        if (tag) ss += `<|START_OF_TURN_TOKEN|><|${tag}_TOKEN|>${trim(m.content)}<|END_OF_TURN_TOKEN|>`;
      }
      if (addAss) ss += '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>';
      break;
    case 'llama3':
      for (const m of chat) ss += `<|start_header_id|>${m.role}<|end_header_id|>\n\n${trim(m.content)}<|eot_id|>`;
      if (addAss) ss += '<|start_header_id|>assistant<|end_header_id|>\n\n';
      break;
    case 'llama4':
      for (const m of chat) ss += `<|header_start|>${m.role}<|header_end|>\n\n${trim(m.content)}<|eot|>`;
      if (addAss) ss += '<|header_start|>assistant<|header_end|>\n\n';
      break;
    case 'granite':
      for (const m of chat) {
        ss += `<|start_of_role|>${m.role}<|end_of_role|>`;
        if (m.role === 'assistant_tool_call') ss += '<|tool_call|>';
        ss += `${m.content}<|end_of_text|>\n`;
      }
      if (addAss) ss += '<|start_of_role|>assistant<|end_of_role|>\n';
      break;
  }
  return ss;
}

export interface ChatFormatterSource {
  chatTemplate: string | undefined;
  bos: number | null;
  eos: number | null;
  addBos: boolean;
  addEos: boolean;
  tokenText(id: number): string;
}

/**
 * Formats conversations for one model: its own Jinja template, or a built-in chosen by name
 * (`template` option: a built-in name, or Jinja source), or ChatML when the model has none (llama.cpp's default).
 * Like llama.cpp, a leading BOS text is dropped from the rendering when the tokenizer adds BOS itself.
 */
export class ChatFormatter {
  readonly kind: 'jinja' | 'builtin';
  readonly builtin: BuiltinTemplate | null;
  private readonly source: string | null;
  private readonly bosText: string;
  private readonly eosText: string;

  constructor(private readonly tok: ChatFormatterSource, template?: string) {
    this.bosText = tok.bos !== null ? tok.tokenText(tok.bos) : '';
    this.eosText = tok.eos !== null ? tok.tokenText(tok.eos) : '';
    const named = template !== undefined ? builtinByName(template) : null;
    if (named) {
      this.kind = 'builtin';
      this.builtin = named;
      this.source = null;
    } else if (template !== undefined || tok.chatTemplate) {
      this.kind = 'jinja';
      this.source = template ?? tok.chatTemplate!;
      this.builtin = detectBuiltin(this.source);
    } else {
      this.kind = 'builtin';
      this.builtin = 'chatml';
      this.source = null;
    }
  }

  get name(): string {
    return this.kind === 'builtin' ? this.builtin! : 'jinja';
  }

  /** the Jinja source rendered (null for a built-in format) */
  get templateSource(): string | null {
    return this.source;
  }

  render(messages: ChatMessage[], opts: RenderOptions = {}): string {
    const addGen = opts.addGenerationPrompt ?? true;
    if (this.kind === 'builtin') return renderBuiltin(this.builtin!, messages, addGen);
    let out = renderJinja(this.source!, messages, { ...opts, addGenerationPrompt: addGen, bosToken: this.bosText, eosToken: this.eosText });
    if (this.tok.addBos && this.bosText && out.startsWith(this.bosText)) out = out.slice(this.bosText.length);
    if (this.tok.addEos && this.eosText && out.endsWith(this.eosText)) out = out.slice(0, -this.eosText.length);
    return out;
  }

  /** End-of-turn strings worth stopping on for this format (besides end-of-generation tokens). */
  stopStrings(): string[] {
    switch (this.builtin) {
      case 'chatml': case 'phi4': return ['<|im_end|>'];
      case 'llama3': return ['<|eot_id|>'];
      case 'gemma': return ['<end_of_turn>'];
      case 'phi3': return ['<|end|>'];
      case 'zephyr': return ['<|endoftext|>'];
      case 'llama4': return ['<|eot|>'];
      default: return [];
    }
  }
}
