// Which of a system's tools the configuration offers: `enabled_tools` patterns name the ones it
// offers (when given), `disabled_tools` the ones it turns off; and the entries that name no tool.
import type { ResolvedSystem } from '../config/resolved.js';

/** Whether a tool name matches an `enabled_tools` pattern: "*" is any run of characters, the rest is literal. */
export const matchesToolPattern = (pattern: string, name: string): boolean => {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === name;
  const first = parts[0] ?? '';
  const last = parts.at(-1) ?? '';
  if (name.length < first.length + last.length || !name.startsWith(first) || !name.endsWith(last)) return false;
  // The middle parts in order, each after the one before, between the fixed start and end.
  let at = first.length;
  const end = name.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = name.indexOf(part, at);
    if (found === -1 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
};

/**
 * Whether the configuration turns a tool off: `disabled_tools` names it, or `enabled_tools` is
 * there and no pattern of it matches. A turned-off tool is built (policies may name it), never offered.
 */
export const isTurnedOff = (system: Pick<ResolvedSystem, 'disabled_tools' | 'enabled_tools'>, name: string): boolean =>
  system.disabled_tools.includes(name) ||
  (system.enabled_tools !== undefined && !system.enabled_tools.some((pattern) => matchesToolPattern(pattern, name)));

/** `disabled_tools`, `enabled_tools` and `access` entries that name no tool of the system (`seen`: the names built). */
export const unknownToolNames = (
  system: Pick<ResolvedSystem, 'disabled_tools' | 'enabled_tools' | 'access'>,
  systemPath: readonly PropertyKey[],
  seen: ReadonlyMap<string, string>,
): { readonly path: readonly PropertyKey[]; readonly message: string }[] => [
  ...[...(system.enabled_tools ?? []).entries()]
    .filter(([, pattern]) => ![...seen.keys()].some((name) => matchesToolPattern(pattern, name)))
    .map(([index, pattern]) => ({
      path: [...systemPath, 'enabled_tools', index],
      message: `no tool matches ${pattern}`,
    })),
  ...[...system.disabled_tools.entries()]
    .filter(([, name]) => !seen.has(name))
    .map(([index, name]) => ({
      path: [...systemPath, 'disabled_tools', index],
      message: `there is no tool named ${name}`,
    })),
  ...Object.keys(system.access)
    .filter((name) => !seen.has(name))
    .map((name) => ({ path: [...systemPath, 'access', name], message: `there is no tool named ${name}` })),
];
