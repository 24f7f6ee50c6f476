// The error body every route answers with, llama-server's shape: {"error": {"code": <http status>, "message", "type"}}
// (format_error_response). A request that fails throws an ApiError; anything else becomes a 500 server_error.

export type ApiErrorType =
  | 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error'
  | 'server_error' | 'not_supported_error' | 'unavailable_error' | 'exceed_context_size_error';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ApiErrorType,
    message: string,
    /** extra fields of the error object (exceed_context_size_error: n_prompt_tokens, n_ctx) */
    readonly extra: Record<string, unknown> = {},
    /** extra response headers (503: Retry-After) */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  body(): { error: Record<string, unknown> } {
    return { error: { code: this.status, message: this.message, type: this.type, ...this.extra } };
  }
}

/** 400 invalid_request_error naming the field at fault. */
export const badRequest = (message: string): ApiError => new ApiError(400, 'invalid_request_error', message);

/** A request field the server knows but does not implement (yet): 400, never silently ignored. */
export const notSupported = (field: string, why = 'is not supported by this server yet'): ApiError =>
  new ApiError(400, 'not_supported_error', `"${field}" ${why}`, { param: field });

export function exceedContext(nPrompt: number, nCtx: number): ApiError {
  return new ApiError(400, 'exceed_context_size_error',
    `the request exceeds the available context size: the prompt has ${nPrompt} tokens, a slot's context holds ${nCtx} tokens`,
    { n_prompt_tokens: nPrompt, n_ctx: nCtx });
}

export function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const err = e as { code?: string; message?: string };
  return new ApiError(500, 'server_error', `${err.code ? `[${err.code}] ` : ''}${err.message ?? String(e)}`);
}
