// Where `npm run executions`, its settle subcommand and `npm run policy:replay` read and write: the
// target options (--local, --data-dir, --table, --region, --endpoint), checked together into one
// target, and the target opened for one use and closed after it.
import { localTableNames } from '../infra/local/dynamodb.js';
import { type ListingTarget, type OpenedListing, openListing, TargetError } from '../infra/local/listing-target.js';
import { errorText } from '../shared/errors.js';
import { dataFolderOf } from './command-line.js';

/** The command line is wrong: said on stderr, exit 2. */
export class UsageError extends Error {}

/** The target options every subcommand reads: the local store, a data folder, a table, an endpoint. */
export const targetOptions = {
  local: { type: 'boolean' },
  'data-dir': { type: 'string' },
  table: { type: 'string' },
  region: { type: 'string' },
  endpoint: { type: 'string' },
} as const;

/** The target options' values as node:util reads them. */
type TargetValues = {
  readonly local?: boolean | undefined;
  readonly 'data-dir'?: string | undefined;
  readonly table?: string | undefined;
  readonly region?: string | undefined;
  readonly endpoint?: string | undefined;
};

/** Where the command reads (and a settlement writes): the target options, checked together. */
export const targetOf = (values: TargetValues, environment: NodeJS.ProcessEnv): ListingTarget => {
  const remote = values.table !== undefined || values.endpoint !== undefined;
  if (values.local === true && remote)
    throw new UsageError('--local reads the data folder; --table and --endpoint read a table: choose one');
  if (values['data-dir'] !== undefined && remote) throw new UsageError('--data-dir is for the local store only');
  if (values.region !== undefined && values.table === undefined) throw new UsageError('--region goes with --table');
  return remote
    ? {
        kind: 'table',
        tableName: values.table ?? localTableNames.executions,
        ...(values.region === undefined ? {} : { region: values.region }),
        ...(values.endpoint === undefined ? {} : { endpoint: values.endpoint, region: values.region ?? 'local' }),
      }
    : { kind: 'local', dataDir: dataFolderOf(values, environment) };
};

/**
 * Opens the target, hands it to `use` and closes it. When it cannot be opened (the target's advice)
 * or `use` fails (headed by `fault`), says why on stderr and answers not ok: the caller's exit status.
 */
export const usingTarget = async <T>(
  target: ListingTarget,
  fault: string,
  use: (opened: OpenedListing) => Promise<T>,
): Promise<{ readonly ok: true; readonly value: T } | { readonly ok: false }> => {
  let opened: OpenedListing;
  try {
    opened = await openListing(target);
  } catch (error) {
    process.stderr.write(`${error instanceof TargetError ? error.message : errorText(error)}\n`);
    return { ok: false };
  }
  try {
    return { ok: true, value: await use(opened) };
  } catch (error) {
    process.stderr.write(`${fault}: ${errorText(error)}\n`);
    return { ok: false };
  } finally {
    await opened.close();
  }
};
