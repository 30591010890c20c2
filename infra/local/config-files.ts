// Loading a configuration snapshot from the file system: the configuration file and the files it
// names, relative to its folder. Used by the local runtime and its tools (check, push).
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { annotationRefusals } from '../../shared/config/checks.js';
import type { LoadOptions } from '../../shared/config/resolve.js';
import type { ConfigProblem } from '../../shared/config/resolved.js';
import { compileSnapshot, type SnapshotCompilation } from '../../shared/control-plane/compile-snapshot.js';
import type { GatewaySnapshot, SnapshotLoad } from '../../shared/control-plane/gateway-snapshot.js';
import { type DiscoveredTools, loadSnapshot, type SnapshotInput } from '../../shared/control-plane/snapshot.js';
import type { PolicyFile } from '../../shared/policy/policy-set.js';

const readText = (path: string): Promise<string | undefined> => readFile(path, 'utf8').catch(() => undefined);

/**
 * Reads the file, then hands its text and a reader of the files it names to `load`. What loads is
 * refused still when a policy asks what the configuration cannot give (an escalation nobody could
 * take): config:check, config:push and the local runtime refuse it alike.
 */
const fromFile = async <
  Outcome extends { ok: true; snapshot: GatewaySnapshot } | { ok: false; problems: ConfigProblem[] },
>(
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
  const outcome = await load({
    text,
    file: path,
    environment,
    files: { read: (relativePath) => readText(join(dirname(path), relativePath)) },
    options,
    ...(discovered === undefined ? {} : { discovered }),
  });
  if (!outcome.ok) return outcome;
  const refusals = annotationRefusals(outcome.snapshot, path);
  return refusals.length === 0 ? outcome : { ok: false, problems: refusals };
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

export type PolicyFilesRead = { ok: true; files: PolicyFile[] } | { ok: false; message: string };

/**
 * Policies given by a file or a folder (its .cedar files, its subfolders' too, in name order), each
 * named by its path as given, so a problem reads as file:line from where the command was run.
 */
export const readPolicyFiles = async (path: string): Promise<PolicyFilesRead> => {
  const found = await stat(path).catch(() => undefined);
  if (found === undefined) return { ok: false, message: `${path}: no such file or folder` };
  const paths = found.isDirectory()
    ? (await readdir(path, { recursive: true }))
        .filter((name) => name.endsWith('.cedar'))
        .sort()
        .map((name) => join(path, name))
    : [path];
  if (paths.length === 0) return { ok: false, message: `${path}: the folder holds no .cedar file` };
  const files: PolicyFile[] = [];
  for (const file of paths) {
    const text = await readText(file);
    if (text === undefined) return { ok: false, message: `${file}: the file cannot be read` };
    files.push({ path: file, text });
  }
  return { ok: true, files };
};
