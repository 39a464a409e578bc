import { LimitExceeded } from './limits';
import { parseDocument } from './parse';
import type { FromChild, ToChild } from './sandbox-protocol';
import { ParseError, type VisionReader } from './types';

// The parse process of sandbox.ts: one file, then the parent ends it.
const post = (m: FromChild) => process.send!(m);

let fileName = 'the file';
let seq = 0;
const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();

/** The vision model, called by the parent process; a failure's details stay there (sandbox.ts rethrows them). */
const vision: VisionReader = (request) =>
  new Promise((resolve, reject) => {
    const id = ++seq;
    pending.set(id, { resolve, reject });
    post({ type: 'vision', id, request });
  });

process.on('message', (m: ToChild) => {
  if (m.type === 'vision-reply') {
    const call = pending.get(m.id);
    pending.delete(m.id);
    if (m.failed) call?.reject(new Error('the vision model call failed'));
    else call?.resolve(m.text ?? '');
    return;
  }
  fileName = m.input.fileName;
  post({ type: 'started' });
  parseDocument({ ...m.input, vision }).then(
    (doc) => post({ type: 'done', doc }),
    (err: unknown) => post(failure(err)),
  );
});

function failure(err: unknown): FromChild {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof LimitExceeded) return { type: 'failed', message, parseError: true, limit: err.limit };
  if (err instanceof ParseError) return { type: 'failed', message, parseError: true };
  // A parser that recursed as deep as the input nests (pdf.js on nested arrays): the file's structure, not a
  // passing failure. pdf.js hands its errors on as plain Errors, so the message is what tells.
  if (/maximum call stack/i.test(message)) {
    return {
      type: 'failed',
      message: `${fileName} is nested too deeply to be read (its structure overflowed the parser's stack)`,
      parseError: true,
    };
  }
  return { type: 'failed', message, parseError: false };
}
