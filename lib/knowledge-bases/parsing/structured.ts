import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { DEFAULT_PARSE_LIMITS, limitExceeded, TextBudget } from './limits';
import { ParseError, type ParseLimits } from './types';

/** What a text writer is bounded by: the file's limits and the budget its output counts against. */
export interface TextLimits {
  limits: ParseLimits;
  budget: TextBudget;
}

const defaultBounds = (fileName: string): TextLimits => ({
  limits: DEFAULT_PARSE_LIMITS,
  budget: new TextBudget(fileName, DEFAULT_PARSE_LIMITS),
});

/** A single CSV record larger than this is not a table row but a broken file (unbalanced quotes). */
const MAX_CSV_RECORD_CHARS = 1_000_000;

/**
 * CSV rows as `header: value` lines, one row per paragraph, so every chunk a search returns still says which
 * column a value belongs to. The delimiter is sniffed from the header line (comma, semicolon or tab), since
 * spreadsheet exports in many locales use semicolons.
 */
export function csvToText(text: string, fileName: string, { budget } = defaultBounds(fileName)): string {
  const rows: string[] = [];
  let names: string[] | undefined;
  try {
    // Rows are turned into text as the parser yields them (on_record returns nothing, so it keeps none): the
    // budget stops a file whose text would be too long before that text exists.
    parseCsv(text, {
      delimiter: sniffDelimiter(text),
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      max_record_size: MAX_CSV_RECORD_CHARS,
      on_record: (record: string[]) => {
        if (!names) {
          names = record.map((h, i) => h.trim() || `column ${i + 1}`);
          return null;
        }
        const row = record
          .map((value, i) => [names![i] ?? `column ${i + 1}`, value.trim()] as const)
          .filter(([, value]) => value !== '')
          .map(([name, value]) => `${name}: ${value}`)
          .join('\n');
        if (row !== '') {
          budget.add(row.length + 2);
          rows.push(row);
        }
        return null;
      },
    });
  } catch (err) {
    if (err instanceof ParseError) throw err;
    throw new ParseError(
      `${fileName} is not valid CSV (${errorMessage(err)}); fix the file and upload it again`,
    );
  }
  if (!names) return '';
  return rows.length === 0 ? names.join(', ') : rows.join('\n\n');
}

function sniffDelimiter(text: string): string {
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  const counts = [',', ';', '\t'].map((d) => [d, firstLine.split(d).length - 1] as const);
  const best = counts.reduce((a, b) => (b[1] > a[1] ? b : a));
  return best[1] > 0 ? best[0] : ',';
}

/** JSON as `path: value` lines (`orders[2].customer.name: Ada`): readable, and each value keeps its context. */
export function jsonToText(text: string, fileName: string, bounds = defaultBounds(fileName)): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ParseError(
      `${fileName} is not valid JSON (${errorMessage(err)}); fix the file and upload it again`,
    );
  }
  return flattenToText(value, bounds.budget);
}

/** XML validated first (the parser itself is lenient), then flattened like JSON with `@attribute` keys. */
export function xmlToText(
  text: string,
  fileName: string,
  { limits, budget } = defaultBounds(fileName),
): string {
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    const { msg, line } = valid.err;
    throw new ParseError(
      `${fileName} is not valid XML (line ${line}: ${msg}); fix the file and upload it again`,
    );
  }
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    textNodeName: '#text',
    // Entity expansion keeps the library's limits, so a "billion laughs" document fails instead of growing.
    processEntities: true,
    htmlEntities: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
    trimValues: true,
    // The parser's own recursion and time grow with the nesting (10,000 levels overflowed its stack).
    maxNestedTags: limits.maxXmlDepth,
  });
  let parsed: unknown;
  try {
    parsed = parser.parse(text);
  } catch (err) {
    if (/nested tags/i.test(errorMessage(err))) {
      throw limitExceeded('maxXmlDepth', fileName, 'its elements are nested deeper than the limit', limits);
    }
    throw new ParseError(`${fileName} could not be read as XML (${errorMessage(err)})`);
  }
  return flattenToText(parsed, budget);
}

/**
 * Walks a parsed value without recursion (deeply nested input cannot overflow the stack) and writes one
 * `path: value` line per leaf; elements of a top-level array become separate paragraphs.
 */
export function flattenToText(root: unknown, budget: TextBudget): string {
  const lines: string[] = [];
  const stack: { path: string; value: unknown; topItem: boolean }[] = [
    { path: '', value: root, topItem: false },
  ];
  while (stack.length > 0) {
    const { path, value, topItem } = stack.pop()!;
    if (topItem && lines.length > 0) lines.push('');
    // A path grows with the depth, so deep input with many leaves writes quadratic text: counted as it goes.
    if (Array.isArray(value)) {
      const top = path === '';
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push({ path: `${path}[${i}]`, value: value[i], topItem: top });
      }
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        // The text of an element with attributes sits under `#text`: it reads as the element's own value.
        const childPath = key === '#text' ? path : path ? `${path}.${key}` : key;
        stack.push({ path: childPath, value: child, topItem: false });
      }
    } else if (isScalar(value) && String(value).trim() !== '') {
      const line = path ? `${path}: ${String(value)}` : String(value);
      budget.add(line.length + 1);
      lines.push(line);
    }
  }
  return lines.join('\n');
}

function isScalar(value: unknown): value is string | number | boolean | bigint {
  return ['string', 'number', 'boolean', 'bigint'].includes(typeof value);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
