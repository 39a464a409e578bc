import { setFlagsFromString } from 'node:v8';
import Ajv from 'ajv';

// A tenant's step schemas may hold `pattern` and `patternProperties` regular expressions, tested against run
// payloads and model answers. V8's own engine backtracks (`^(a+)+$` over 30 characters runs for minutes), so these
// run on V8's non-backtracking engine (the `l` flag), in time linear in the string. It refuses what it cannot run
// that way (backreferences, lookarounds): the schema does not compile, which is a 400 when the step is saved.
setFlagsFromString('--enable-experimental-regexp-engine');

/** A regular expression of a tenant's schema on the linear-time engine; Ajv's `code.regExp`. */
export const linearRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    try {
      return new RegExp(pattern, `${flags}l`);
    } catch {
      throw new Error(
        `pattern ${JSON.stringify(pattern.slice(0, 100))} cannot be matched in linear time; ` +
          'leave out backreferences and lookarounds (and \\p{…} classes)',
      );
    }
  },
  { code: 'linearRegExp' },
);

/**
 * An Ajv for a tenant's schemas: any draft-07 keyword, unknown ones tolerated, patterns on the linear engine
 * (which runs only without the `u` flag: `\p{…}` classes are refused, and astral characters count as two).
 */
export const tenantAjv = () =>
  new Ajv({ allErrors: true, strict: false, unicodeRegExp: false, code: { regExp: linearRegExp } });
