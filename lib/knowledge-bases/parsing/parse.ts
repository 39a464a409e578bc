// TEMPORARY (replaced by the parsing branch)
import { ParseError, type ParseInput, type ParsedDocument } from './types';

export async function parseDocument(input: ParseInput): Promise<ParsedDocument> {
  const text = Buffer.from(input.bytes).toString('utf8');
  if (!text.trim()) throw new ParseError('the file is empty');
  return { segments: [{ text }] };
}
