import type { z } from 'zod';
import { ValidationError } from '../errors.js';

/** Parses untrusted input with a schema; a failure names the first offending field. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, what = 'request'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join('.') : what;
  const message =
    issue.code === 'unrecognized_keys'
      ? `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`
      : issue.message;
  throw new ValidationError(`Invalid ${field}: ${message}.`, { field });
}
