import { z } from 'zod';
import { isIpOrCidr } from '../ip-ranges.js';

/** The value types settings share (config.ts parses them all at once). */

export const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** `false` or empty: no proxy is trusted (an empty list). Otherwise a comma-separated list of IPs / CIDR ranges. */
export const trustedProxies = z
  .string()
  .default('false')
  .transform((setting, context) => {
    const entries = setting
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '' && entry !== 'false');
    const invalid = entries.filter((entry) => !isIpOrCidr(entry));
    if (invalid.length > 0) {
      context.addIssue({ code: 'custom', message: `not an IP address or CIDR range: ${invalid.join(', ')}` });
      return z.NEVER;
    }
    return entries;
  });

/** A missing value is reported as "required", a present but wrong one by what it must be. */
export const requiredUrl = (protocol: RegExp, shape: string) =>
  z.url({
    protocol,
    error: (issue) => (issue.input === undefined || issue.input === '' ? 'required' : `must be a ${shape} URL`),
  });

export const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
export const nonNegativeInt = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
