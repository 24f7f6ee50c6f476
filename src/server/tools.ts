// OpenAI-style tool calling for chat templates that support it: the request's `tools` / `tool_choice`,
// the grammar that forces a call (tool_choice "required" or a named function), and parsing the model's
// output back into `tool_calls`. Two output formats, by the template:
// - hermes (Qwen2.5/Qwen3 and others): <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>, one
//   or more, text around them is content;
// - llama3-json (Llama 3.1/3.2/3.3 custom tools): the whole reply is {"name": ..., "parameters": {...}}.
import { jsonSchemaToGrammar } from '../grammar/json-schema.js';
import { badRequest, notSupported } from './errors.js';

export type ToolFormat = 'hermes' | 'llama3-json';

export interface ToolDef {
  name: string;
  description?: string;
  /** JSON Schema of the arguments */
  parameters: unknown;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { name: string };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The tool-call format a chat template uses, from its source (null: the template cannot take tools). */
export function toolFormat(templateSource: string | null): ToolFormat | null {
  if (!templateSource || !/\btools\b/.test(templateSource)) return null;
  if (templateSource.includes('<tool_call>')) return 'hermes';
  if (templateSource.includes('"parameters"') || templateSource.includes('Environment: ipython')) return 'llama3-json';
  return null;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `tools` and `tool_choice` of a chat request, checked. */
export function parseTools(tools: unknown, choice: unknown): { tools: ToolDef[]; choice: ToolChoice } {
  if (!Array.isArray(tools)) throw badRequest('"tools" must be an array');
  const defs = tools.map((t, i): ToolDef => {
    if (!isObj(t) || t.type !== 'function' || !isObj(t.function)) throw badRequest(`tools[${i}] must be {"type": "function", "function": {...}}`);
    const f = t.function;
    if (typeof f.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(f.name)) throw badRequest(`tools[${i}].function.name must be 1-64 letters, digits, _ or -`);
    if (f.description !== undefined && typeof f.description !== 'string') throw badRequest(`tools[${i}].function.description must be a string`);
    if (f.parameters !== undefined && !isObj(f.parameters)) throw badRequest(`tools[${i}].function.parameters must be a JSON Schema object`);
    return { name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), parameters: f.parameters ?? { type: 'object', properties: {} } };
  });
  let c: ToolChoice = defs.length ? 'auto' : 'none';
  if (choice !== undefined && choice !== null) {
    if (choice === 'none' || choice === 'auto' || choice === 'required') c = choice;
    else if (isObj(choice) && choice.type === 'function' && isObj(choice.function) && typeof choice.function.name === 'string') {
      const name = choice.function.name;
      if (!defs.some((d) => d.name === name)) throw badRequest(`tool_choice names the function "${name}", which is not in "tools"`);
      c = { name };
    } else throw badRequest('"tool_choice" must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}');
  }
  if (c !== 'none' && defs.length === 0) throw badRequest('"tool_choice" needs "tools"');
  return { tools: defs, choice: c };
}

/** The tools as chat templates expect them (the OpenAI request shape). */
export function templateTools(tools: ToolDef[]): unknown[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.parameters } }));
}

/** The GBNF that forces one call of the chosen tool(s), in the template's format. */
export function toolCallGrammar(format: ToolFormat, tools: ToolDef[], choice: 'required' | { name: string }): string {
  const pick = choice === 'required' ? tools : tools.filter((t) => t.name === choice.name);
  const argKey = format === 'hermes' ? 'arguments' : 'parameters';
  const call = (t: ToolDef) => ({ type: 'object', properties: { name: { const: t.name }, [argKey]: t.parameters }, required: ['name', argKey] });
  const schema = pick.length === 1 ? call(pick[0]!) : { anyOf: pick.map(call) };
  let g: string;
  try {
    g = jsonSchemaToGrammar(schema);
  } catch (e) {
    throw notSupported('tools', `: a function's parameters cannot be constrained: ${(e as Error).message}`);
  }
  if (format === 'llama3-json') return g;
  // the JSON object inside the hermes tags: the converter's root becomes a rule of its own
  let name = 'tool-call';
  while (new RegExp(`^${name} ::=`, 'm').test(g)) name += '-';
  return g.replace(/^root ::= /m, `${name} ::= `) + `root ::= "<tool_call>\\n" ${name} "\\n</tool_call>"\n`;
}

let callSeq = 0;
const callId = () => `call_${Date.now().toString(36)}${(callSeq++).toString(36)}`;

/** Splits a reply into content and tool calls (calls whose JSON does not parse stay content). */
export function parseToolCalls(format: ToolFormat, text: string, tools: ToolDef[]): { content: string | null; calls: ToolCall[] } {
  const known = new Set(tools.map((t) => t.name));
  const asCall = (v: unknown, argKey: string): ToolCall | null => {
    if (!isObj(v) || typeof v.name !== 'string' || !known.has(v.name)) return null;
    const args = v[argKey] ?? v.arguments ?? v.parameters ?? {};
    if (!isObj(args)) return null;
    return { id: callId(), type: 'function', function: { name: v.name, arguments: JSON.stringify(args) } };
  };
  const calls: ToolCall[] = [];
  let content = text;
  if (format === 'hermes') {
    content = text.replace(/<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g, (whole, body: string) => {
      try {
        const c = asCall(JSON.parse(body), 'arguments');
        if (c) { calls.push(c); return ''; }
      } catch { /* not a call */ }
      return whole;
    });
  } else {
    const t = text.trim().replace(/^<\|python_tag\|>/, '');
    try {
      const c = asCall(JSON.parse(t), 'parameters');
      if (c) { calls.push(c); content = ''; }
    } catch { /* plain content */ }
  }
  content = content.trim();
  return { content: content.length ? content : null, calls };
}
