/** JSON a tenant hands us (request bodies, model answers kept in a chain's state) nests at most this deep. */
export const MAX_JSON_DEPTH = 32;

/** The nesting depth of a parsed JSON value, without recursion (a hostile value must not exhaust the stack). */
export function jsonDepth(value: unknown, stopAt = Infinity): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    max = Math.max(max, depth + 1);
    if (max > stopAt) return max;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return max;
}

/** How many objects and arrays a parsed JSON value holds (counting stops once past `stopAt`). */
export function jsonNodes(value: unknown, stopAt = Infinity): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length && count <= stopAt) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    count++;
    for (const child of Object.values(node)) stack.push(child);
  }
  return count;
}
