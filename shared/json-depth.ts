// How deep a JSON value nests, found without recursion (so a value nested a million levels deep is
// measured, not a stack overflow), and the deepest answer of a system the gateway reads.

/** The deepest answer of a system that is taken: the walks over results (secrets, views) recurse. */
export const maxResultDepth = 64;

/** How deep a JSON value nests, counting up to the limit only (a deeper value stops the walk). */
export const depthOf = (value: unknown, limit: number): number => {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === undefined) break;
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > deepest) deepest = depth + 1;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
};
