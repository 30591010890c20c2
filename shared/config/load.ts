// Turns the configuration file's text into a validated, secret-resolved configuration, or into a
// list of problems that each name the file, the path in it, the line, the value and what was
// expected. Pure: the caller reads the file and passes the environment. The YAML is read here;
// the rules of its content (resolve.ts) are the ones the deployed functions apply to the data
// config:push compiled.
import { type LoadOptions, resolveConfigData } from './resolve.js';
import type { ConfigProblem, ResolvedConfig } from './resolved.js';
import { readYaml } from './yaml-lines.js';

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

export const loadConfigText = (
  text: string,
  file: string,
  environment: Readonly<Record<string, string | undefined>>,
  options: LoadOptions = {},
): ConfigLoad => {
  const read = readYaml(text);
  if (!read.ok) return { ok: false, problems: read.problems.map((found) => ({ file, path: '', ...found })) };
  const data: unknown = read.data ?? {};
  const { lineAt } = read;
  const resolved = resolveConfigData(data, {
    file,
    environment,
    options,
    lineAt,
    keyLineAt: read.keyLineAt,
  });
  return resolved.ok ? { ok: true, config: resolved.config, lineAt, data } : resolved;
};
