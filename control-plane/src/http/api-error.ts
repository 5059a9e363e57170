import { type ErrorCode, errorStatus } from '@dpp/shared';

/**
 * The one typed error of the control plane. Domain code throws it; the error handler renders it
 * once as `{ error: { code, message, details? } }`. Statuses the spec lists "with no code" (401, a
 * plain 404, 405, a plain 409) are built with `ApiError.plain` and render without `code`.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.status = errorStatus(code);
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /** An error the spec gives a status but no code (401, plain 404, 405, plain 409). */
  static plain(
    status: 401 | 404 | 405 | 409,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ): ApiError {
    const e = new ApiError('INTERNAL_ERROR', message, options);
    Object.assign(e, { status, code: undefined });
    return e;
  }

  static notFound(what = 'Resource'): ApiError {
    return ApiError.plain(404, `${what} not found`);
  }

  static validation(field: string, message: string, details: Record<string, unknown> = {}): ApiError {
    return new ApiError('VALIDATION_ERROR', message, { details: { field, ...details } });
  }

  toBody(): { error: { code?: string; message: string; details?: Record<string, unknown> } } {
    return {
      error: {
        ...(this.code ? { code: this.code } : {}),
        message: this.message,
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}

/** Coerces anything thrown into an ApiError; unknown faults become a 500 that leaks nothing. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError(
    'INTERNAL_ERROR',
    'An unexpected error occurred; quote the correlation id to support.',
    {
      cause: err,
    },
  );
}
