import type { Context } from 'hono';
import type { AppError } from './errors.js';

/**
 * An AppError as the response a client gets: its status, its headers and the catalogue body, and
 * nothing else. The API's error handler and the worker's health server both answer through this.
 */
export function errorResponse(c: Context, error: AppError): Response {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json(error.toBody(), error.status);
}
