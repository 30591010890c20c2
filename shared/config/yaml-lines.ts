// Reading a YAML file for people: its data, and the line of any place in it, so every problem
// found in the configuration or in a policy case file names its line. One way to parse (unique
// keys, the first line of each syntax error) for every file the gateway reads as YAML.
import { isMap, isNode, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';

export type YamlRead =
  | {
      readonly ok: true;
      /** The file's content as plain data (null for an empty file). */
      readonly data: unknown;
      /** The line of the value at a path, or null when nothing is there. */
      lineAt(path: readonly PropertyKey[]): number | null;
      /** The line of the value at a path, or of its nearest parent that is there. */
      nearestLineAt(path: readonly PropertyKey[]): number | null;
      /** The line of a field's key (for an unknown field), or of its map when the key is not there. */
      keyLineAt(path: readonly PropertyKey[], key: PropertyKey): number | null;
    }
  | { readonly ok: false; readonly problems: readonly { readonly line: number; readonly message: string }[] };

/** The node one step down, or null. */
const child = (node: Node | null, step: PropertyKey, key = false): Node | null => {
  let next: unknown = null;
  if (isMap(node)) {
    const pair = node.items.find((item) => isScalar(item.key) && item.key.value === step);
    next = key ? pair?.key : pair?.value;
  } else if (isSeq(node) && typeof step === 'number') next = node.items[step];
  return isNode(next) ? next : null;
};

export const readYaml = (text: string): YamlRead => {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((error) => ({
        line: lines.linePos(error.pos[0]).line,
        message: `not valid YAML: ${error.message.split('\n')[0]}`,
      })),
    };
  }
  const lineOf = (node: Node | null): number | null =>
    node?.range === undefined || node.range === null ? null : lines.linePos(node.range[0]).line;
  /** The node at a path; with `nearest`, the deepest node on the way when the path leaves the file. */
  const nodeAt = (path: readonly PropertyKey[], nearest: boolean): Node | null => {
    let node: Node | null = document.contents;
    for (const step of path) {
      if (!isMap(node) && !isSeq(node)) return node;
      const next = child(node, step);
      if (next === null) return nearest ? node : null;
      node = next;
    }
    return node;
  };
  return {
    ok: true,
    data: document.toJS(),
    lineAt: (path) => lineOf(nodeAt(path, false)),
    nearestLineAt: (path) => lineOf(nodeAt(path, true)),
    keyLineAt: (path, key) => {
      const parent = nodeAt(path, false);
      return lineOf(isMap(parent) ? (child(parent, key, true) ?? parent) : parent);
    },
  };
};
