// Where `npm run executions` and its settle subcommand read and write: the target options
// (--local, --data-dir, --table, --region, --endpoint), checked together into one target.
import { localTableNames } from '../infra/local/dynamodb.js';
import type { ListingTarget } from '../infra/local/listing-target.js';
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
