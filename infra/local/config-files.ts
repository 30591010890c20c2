// Loading a configuration snapshot from the file system: the configuration file and the files it
// names, relative to its folder. Used by the local runtime's tools (check, push).
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LoadOptions } from '../../shared/config/resolve.js';
import type { ConfigProblem } from '../../shared/config/resolved.js';
import { compileSnapshot, type SnapshotCompilation } from '../../shared/control-plane/compile-snapshot.js';
import type { SnapshotLoad } from '../../shared/control-plane/gateway-snapshot.js';
import { type DiscoveredTools, loadSnapshot, type SnapshotInput } from '../../shared/control-plane/snapshot.js';

const readText = (path: string): Promise<string | undefined> => readFile(path, 'utf8').catch(() => undefined);

/** Reads the file, then hands its text and a reader of the files it names to `load`. */
const fromFile = async <Outcome>(
  path: string,
  environment: Readonly<Record<string, string | undefined>>,
  options: LoadOptions,
  discovered: DiscoveredTools | undefined,
  load: (input: SnapshotInput) => Promise<Outcome>,
): Promise<Outcome | { ok: false; problems: ConfigProblem[] }> => {
  const text = await readText(path);
  if (text === undefined) {
    return { ok: false, problems: [{ file: path, path: '', line: null, message: 'the file cannot be read' }] };
  }
  return load({
    text,
    file: path,
    environment,
    files: { read: (relativePath) => readText(join(dirname(path), relativePath)) },
    options,
    ...(discovered === undefined ? {} : { discovered }),
  });
};

export const loadSnapshotFromFile = (
  path: string,
  environment: Readonly<Record<string, string | undefined>>,
  options: LoadOptions = {},
  /** MCP servers' tools, as discovered by the caller. */
  discovered?: DiscoveredTools,
): Promise<SnapshotLoad> => fromFile(path, environment, options, discovered, loadSnapshot);

/** The snapshot and its compiled form, as config:push writes it. */
export const compileSnapshotFromFile = (
  path: string,
  environment: Readonly<Record<string, string | undefined>>,
  options: LoadOptions = {},
  discovered?: DiscoveredTools,
): Promise<SnapshotCompilation> => fromFile(path, environment, options, discovered, compileSnapshot);
