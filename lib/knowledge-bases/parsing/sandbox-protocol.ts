import type { ParsedDocument, ParseLimits, ParseStrategy, VisionReader } from './types';

/** Messages between the parse sandbox (sandbox.ts) and its child process (sandbox-child.ts), over IPC. */
export type ToChild =
  | {
      type: 'parse';
      input: {
        fileName: string;
        bytes: Uint8Array;
        strategy: ParseStrategy;
        customInstructions?: string | null;
        limits: ParseLimits;
      };
    }
  | { type: 'vision-reply'; id: number; text?: string; failed?: boolean };

export type FromChild =
  | { type: 'started' }
  | { type: 'vision'; id: number; request: Parameters<VisionReader>[0] }
  | { type: 'done'; doc: ParsedDocument }
  | { type: 'failed'; message: string; parseError: boolean; limit?: keyof ParseLimits };
