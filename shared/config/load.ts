// Turns the configuration file's text into a validated, secret-resolved configuration, or into a
// list of problems that each name the file, the path in it, the line, the value and what was
// expected. Pure: the caller reads the file and passes the environment. The YAML is read here;
// the rules of its content (resolve.ts) are the ones the deployed functions apply to the data
// config:push compiled.
import { isMap, isNode, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { type LoadOptions, resolveConfigData } from './resolve.js';
import type { ConfigProblem, ResolvedConfig } from './resolved.js';

export type ConfigLoad =
  | {
      ok: true;
      config: ResolvedConfig;
      /** The line of a path in the file, for problems found after loading (null when absent). */
      lineAt: (path: readonly PropertyKey[]) => number | null;
      /** The file's content as data, references as written: what config:push compiles. */
      data: unknown;
    }
  | { ok: false; problems: ConfigProblem[] };

/** Finds the key node of a field, to report the line of an unknown field. */
const keyNodeAt = (root: Node | null, path: readonly PropertyKey[], key: string): Node | null => {
  const parent = nodeAt(root, path);
  if (!isMap(parent)) return parent;
  const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === key);
  return isNode(pair?.key) ? pair.key : parent;
};

/** Finds the YAML node at a path, to report its line. */
const nodeAt = (root: Node | null, path: readonly PropertyKey[]): Node | null => {
  let node: Node | null = root;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && item.key.value === key);
      node = isNode(pair?.value) ? pair.value : null;
    } else if (isSeq(node) && typeof key === 'number') {
      const item = node.items[key];
      node = isNode(item) ? item : null;
    } else return node;
  }
  return node;
};

export const loadConfigText = (
  text: string,
  file: string,
  environment: Readonly<Record<string, string | undefined>>,
  options: LoadOptions = {},
): ConfigLoad => {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const lineOf = (node: Node | null): number | null =>
    node?.range === undefined || node.range === null ? null : lines.linePos(node.range[0]).line;
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((error) => ({
        file,
        path: '',
        line: lines.linePos(error.pos[0]).line,
        message: `not valid YAML: ${error.message.split('\n')[0]}`,
      })),
    };
  }
  const data: unknown = document.toJS() ?? {};
  const lineAt = (path: readonly PropertyKey[]) => lineOf(nodeAt(document.contents, path));
  const resolved = resolveConfigData(data, {
    file,
    environment,
    options,
    lineAt,
    keyLineAt: (path, key) => lineOf(keyNodeAt(document.contents, path, key)),
  });
  return resolved.ok ? { ok: true, config: resolved.config, lineAt, data } : resolved;
};
