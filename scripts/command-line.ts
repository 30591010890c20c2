// What every command of the project reads the same way: its options (an unknown or malformed one
// exits 2 with the usage, --help prints the usage and exits 0), the configuration file it works
// on, and the data folder a running local gateway keeps.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { defaultConfigFile, defaultDataDir } from '../infra/local/options.js';
import { errorText } from '../shared/errors.js';

/** A command's options as node:util reads them; every command has --help. */
export type CommandOptions = NonNullable<ParseArgsConfig['options']> & { readonly help: { readonly type: 'boolean' } };

/** The values and positionals of a command line. */
export type CommandLine<T extends CommandOptions> = ReturnType<
  typeof parseArgs<{ options: T; allowPositionals: true; strict: true }>
>;

/** The command should stop with this exit code: it has already said why. */
export interface CommandExit {
  readonly exit: number;
}

/**
 * Reads the command line against the command's options. Options it does not know, or a value
 * missing, print the error and the usage on stderr (exit 2); --help prints the usage (exit 0).
 * Without `positionals`, a positional argument is such an error too.
 */
export const readCommandLine = <T extends CommandOptions>(
  options: T,
  usage: string,
  { positionals = false, args = process.argv.slice(2) }: { positionals?: boolean; args?: string[] } = {},
): CommandLine<T> | CommandExit => {
  let parsed: CommandLine<T>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
    if (!positionals && parsed.positionals.length > 0)
      throw new Error(`Unexpected argument '${parsed.positionals[0]}': this command takes options only.`);
  } catch (error) {
    process.stderr.write(`${errorText(error)}\n\n${usage}`);
    return { exit: 2 };
  }
  const values: Readonly<Record<string, unknown>> = parsed.values;
  if (values.help === true) {
    process.stdout.write(usage);
    return { exit: 0 };
  }
  return parsed;
};

/** The options of the commands that read the configuration's tools, and their usage lines. */
export const toolSnapshotOptions = {
  config: { type: 'string' },
  offline: { type: 'boolean' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

export const toolSnapshotUsage = `  --config <file>  the configuration (default ${defaultConfigFile})
  --offline        do not ask MCP servers for their tools
  --data-dir <dir> where a running gateway keeps its MCP servers' last lists, used for a server
                   not asked or not reachable from here (GATEWAY_DATA_DIR, default ${defaultDataDir})
  --json           machine-readable output
`;

/** The local gateway's data folder: --data-dir, else GATEWAY_DATA_DIR, else the default. */
export const dataFolderOf = (values: { readonly 'data-dir'?: string | undefined }, environment = process.env): string =>
  values['data-dir'] ?? environment.GATEWAY_DATA_DIR ?? defaultDataDir;

/** Rows as a terminal table: each column as wide as its widest cell, two spaces between. */
export const textTable = (rows: readonly (readonly string[])[]): string => {
  const widths = (rows[0] ?? []).map((_, index) => Math.max(...rows.map((row) => (row[index] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((text, index) => text.padEnd(widths[index] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};
