import OpenAI from 'openai';
import { ParseError, type VisionReader } from './types';

const TRANSCRIBE = [
  'You transcribe documents for a search index.',
  'Write out all text visible in the image faithfully, in reading order, in its original language, without',
  'summarising, correcting or adding anything. Keep headings, lists and paragraphs on their own lines; write',
  'tables as Markdown tables. For a chart, diagram or photo, add one short sentence saying what it shows.',
  'Reply with the transcription only, no preamble. If the image has no text and nothing to describe, reply',
  'with nothing.',
].join(' ');

/** Retrying does not help a request the server refused as such (bad image, unknown model, no access);
 * timeouts, conflicts and rate limits are transient. */
const TRANSIENT_4XX = new Set([408, 409, 429]);

/**
 * A VisionReader on an OpenAI-compatible chat completion: the image goes as a data-URL content part, the
 * file's customInstructions after the transcription rules. A refused request (non-transient 4xx) becomes a
 * ParseError, which is not retried; anything else is thrown as it is, so the activity is retried.
 */
export function createVisionReader(llm: OpenAI, model: string): VisionReader {
  return async ({ bytes, mimeType, instructions }) => {
    const dataUrl = `data:${mimeType};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64')}`;
    const system = instructions?.trim()
      ? `${TRANSCRIBE}\n\nInstructions from the file's owner:\n${instructions.trim()}`
      : TRANSCRIBE;
    try {
      const completion = await llm.chat.completions.create({
        model,
        temperature: 0,
        messages: [
          { role: 'system', content: system },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Transcribe this page.' },
              { type: 'image_url', image_url: { url: dataUrl, detail: 'high' } },
            ],
          },
        ],
      });
      return completion.choices[0]?.message.content ?? '';
    } catch (err) {
      const status =
        err instanceof OpenAI.APIError && typeof err.status === 'number' ? err.status : undefined;
      if (status !== undefined && isPermanent(status)) {
        throw new ParseError(
          `the vision model refused the page (HTTP ${status}: ${(err as Error).message}); check the knowledge base's vision model or use the text parse strategy`,
        );
      }
      throw err;
    }
  };
}

function isPermanent(status: number): boolean {
  return status >= 400 && status < 500 && !TRANSIENT_4XX.has(status);
}
