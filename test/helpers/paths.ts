import { join } from 'node:path';

/** The repository's root: test files name the files they read from here, wherever they sit in test/. */
export const ROOT = join(__dirname, '..', '..');
