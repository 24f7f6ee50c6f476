// The library's error types. Every error the API throws is one of these classes, each with a stable
// `code` (callers switch on the code, never on the message):
//   GgufError        the file: bad magic, truncation, unsupported architecture... (src/gguf/errors.ts)
//   TokenizerError   tokenizer metadata (src/tokenizer/vocab.ts)
//   ChatTemplateError  a chat template that does not parse or render
//   ContextError     the KV cache / evaluation (CONTEXT_FULL, BAD_TOKEN, ...)
//   DeviceError      a compute device (COMPILE_FAILED, OVER_BUDGET, ...)
//   GrammarError     a grammar or JSON Schema constraint (GBNF_SYNTAX, GRAMMAR_BUDGET, ...)
//   UsageError       the caller: a bad argument, a closed object, a busy context
export { GgufError, type GgufErrorCode, type GgufErrorDetail } from '../gguf/errors.js';
export { TokenizerError } from '../tokenizer/vocab.js';
export { ChatTemplateError } from '../tokenizer/chat-template.js';
export { ContextError } from '../runtime/context.js';
export { DeviceError, type DeviceErrorCode } from '../backends/backend.js';
export { GrammarError, type GrammarErrorCode } from '../grammar/errors.js';

export type UsageErrorCode =
  | 'USAGE' // an argument or option out of range or of the wrong type (the CLI's usage errors too)
  | 'UNSUPPORTED_INPUT' // loadModel got something that is not a path, URL, bytes or Blob
  | 'FETCH_FAILED' // a URL could not be fetched (network error or a non-2xx status)
  | 'TOO_LARGE' // the model's weights do not fit the device's memory (the cpu device: wasm32's 4 GiB)
  | 'CLOSED' // the model or context was closed
  | 'BUSY'; // a context is already generating (one generation per context at a time)

export class UsageError extends Error {
  readonly code: UsageErrorCode;
  /** the option or argument at fault, when there is one */
  readonly option: string | undefined;
  constructor(code: UsageErrorCode, message: string, option?: string) {
    super(message);
    this.name = 'UsageError';
    this.code = code;
    this.option = option;
  }
}
