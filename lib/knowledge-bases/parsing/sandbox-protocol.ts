import type { ParseLimits } from './limits';
import type { ParsedDocument, ParseStrategy, VisionReader } from './types';

/** Messages between the parse sandbox (sandbox.ts) and its thread (sandbox-thread.ts). */
export type ToThread =
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

export type FromThread =
  | { type: 'started' }
  | { type: 'vision'; id: number; request: Parameters<VisionReader>[0] }
  | { type: 'done'; doc: ParsedDocument }
  | { type: 'failed'; message: string; parseError: boolean; limit?: keyof ParseLimits };
