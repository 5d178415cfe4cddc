/**
 * One error type for everything a client may be told, and one table from its code to the HTTP
 * status and the `errorCode` of the body (docs/design.md §3). Anything else that reaches the error handler
 * becomes INTERNAL_ERROR with a generic message.
 */

const errorCatalogue = {
  INVALID_REQUEST: { errorCode: 1, status: 400, message: 'Invalid request' },
  AUTHENTICATION_FAILED: { errorCode: 2, status: 401, message: 'Authentication failed' },
  TIMESTAMP_EXPIRED: { errorCode: 3, status: 401, message: 'Timestamp outside the accepted window' },
  FORBIDDEN: { errorCode: 4, status: 403, message: 'Source address not allowed' },
  PAYLOAD_TOO_LARGE: { errorCode: 5, status: 413, message: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { errorCode: 6, status: 415, message: 'Content type must be application/json' },
  RATE_LIMITED: { errorCode: 7, status: 429, message: 'Too many requests' },
  INVALID_TOKEN: { errorCode: 8, status: 200, message: 'Invalid token' },
  TOKEN_EXPIRED: { errorCode: 9, status: 200, message: 'Token expired' },
  NOT_FOUND: { errorCode: 10, status: 404, message: 'Not found' },
  SERVICE_UNAVAILABLE: { errorCode: 11, status: 503, message: 'Service temporarily unavailable' },
  IDEMPOTENCY_CONFLICT: { errorCode: 12, status: 422, message: 'Idempotency-Key reused with different request fields' },
  CONFLICT: { errorCode: 13, status: 409, message: 'Conflict' },
  INTERNAL_ERROR: { errorCode: 99, status: 500, message: 'Internal error' },
} as const;

export type ErrorName = keyof typeof errorCatalogue;

/**
 * The Retry-After of an answer that invites a retry as soon as possible (and of a 429 or 503 raised
 * without a figure of its own): the smallest whole second the header can say, as the trouble behind it
 * (a dependency away for a moment, a bound full for now) is gone by then or is answered again.
 */
export const RETRY_SOON_SECONDS = 1;

/** The errors that always invite a retry; CONFLICT does only when its raiser gives a Retry-After. */
const INVITES_RETRY: ReadonlySet<ErrorName> = new Set(['RATE_LIMITED', 'SERVICE_UNAVAILABLE']);
export type HttpErrorStatus = (typeof errorCatalogue)[ErrorName]['status'];

export interface ErrorBody {
  errorCode: number;
  errorMessage: string;
}

export interface AppErrorOptions {
  /** Said in the log only: why authentication failed, which dependency was down. */
  logDetail?: string;
  /** Seconds, for the Retry-After header of 409, 429 and 503: a shorthand for that header. */
  retryAfterSeconds?: number;
  /** Headers the response carries besides the body, e.g. `WWW-Authenticate` on a 401. */
  headers?: Readonly<Record<string, string>>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly errorName: ErrorName;
  readonly logDetail: string | undefined;
  /** Set on the response by whatever turns this error into one. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(errorName: ErrorName, message?: string, options: AppErrorOptions = {}) {
    super(message ?? errorCatalogue[errorName].message, { cause: options.cause });
    this.name = 'AppError';
    this.errorName = errorName;
    this.logDetail = options.logDetail;
    // Every answer that invites a retry says when (docs/interface.md, "Retrying"): a 429 or 503 raised
    // without its own figure gets one second.
    const retryAfter = options.retryAfterSeconds ?? (INVITES_RETRY.has(errorName) ? RETRY_SOON_SECONDS : undefined);
    this.headers =
      retryAfter === undefined ? { ...options.headers } : { ...options.headers, 'Retry-After': String(retryAfter) };
  }

  get status(): HttpErrorStatus {
    return errorCatalogue[this.errorName].status;
  }

  toBody(): ErrorBody {
    return { errorCode: errorCatalogue[this.errorName].errorCode, errorMessage: this.message };
  }
}
