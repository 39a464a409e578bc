import { badRequest } from '@lib/errors';
import { secretPropertiesOf } from './secret-properties';

/** What a secret configuration value reads as: it is set, and that is all anyone is shown. */
export const SECRET_MASK = '********';

type Config = Record<string, unknown>;

/** Applies `fn` to every secret value of a configuration (a secret property is a string or an object of
 * strings, like request headers), returning a copy. */
function mapSecrets(toolCode: string, config: Config, fn: (value: string, where: string) => string): Config {
  const copy: Config = { ...config };
  for (const prop of secretPropertiesOf(toolCode)) {
    const value = copy[prop];
    if (typeof value === 'string') copy[prop] = fn(value, prop);
    else if (value && typeof value === 'object') {
      copy[prop] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [
          k,
          typeof v === 'string' ? fn(v, `${prop}.${k}`) : v,
        ]),
      );
    }
  }
  return copy;
}

/** The configuration as anyone may see it: every secret value masked. */
export function redactConfiguration(toolCode: string, config: Config): Config {
  return mapSecrets(toolCode, config, () => SECRET_MASK);
}

/**
 * A configuration sent back with masked secrets (as GET shows it) keeps the stored values: a client can change
 * the rest without knowing the secrets. A mask where nothing is stored is a 400.
 */
export function keepStoredSecrets(toolCode: string, incoming: Config, stored: Config): Config {
  const storedValues = new Map<string, string>();
  mapSecrets(toolCode, stored, (value, where) => {
    storedValues.set(where, value);
    return value;
  });
  return mapSecrets(toolCode, incoming, (value, where) => {
    if (value !== SECRET_MASK) return value;
    const kept = storedValues.get(where);
    if (kept === undefined)
      throw badRequest(
        `configuration.${where} is ${SECRET_MASK}, but no value is stored to keep; send the value`,
      );
    return kept;
  });
}
