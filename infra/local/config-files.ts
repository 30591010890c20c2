// Loading a configuration snapshot from the file system: the configuration file and the files it
// names, relative to its folder. Used by the local runtime's tools (check, push).
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LoadOptions } from '../../shared/config/resolve.js';
import type { SnapshotLoad } from '../../shared/control-plane/gateway-snapshot.js';
import { type DiscoveredTools, loadSnapshot } from '../../shared/control-plane/snapshot.js';

const readText = (path: string): Promise<string | undefined> => readFile(path, 'utf8').catch(() => undefined);

export const loadSnapshotFromFile = async (
  path: string,
  environment: Readonly<Record<string, string | undefined>>,
  options: LoadOptions = {},
  /** MCP servers' tools, as discovered by the caller. */
  discovered?: DiscoveredTools,
): Promise<SnapshotLoad> => {
  const text = await readText(path);
  if (text === undefined) {
    return { ok: false, problems: [{ file: path, path: '', line: null, message: 'the file cannot be read' }] };
  }
  return loadSnapshot({
    text,
    file: path,
    environment,
    files: { read: (relativePath) => readText(join(dirname(path), relativePath)) },
    options,
    ...(discovered === undefined ? {} : { discovered }),
  });
};
