import { z } from 'zod';

// Shapes the variables of lib/config share.

export const bool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1')
  .optional();

/** An empty value (`VAR=` in a compose file) means unset. */
export const unsetIfEmpty = <T extends z.ZodTypeAny>(t: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), t);

export const MB = 1024 * 1024;
export const int = () => z.coerce.number().int();
