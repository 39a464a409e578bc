/** Polls until `check` returns a value (not undefined/false) or the deadline passes. Not a timing
 * assertion: the deadline only bounds how long a failing test hangs. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `condition not met in ${timeoutMs} ms${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
  );
}

/** A gate a test opens when it chooses: a scripted answer awaits `opened` until the test calls `open()`. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
