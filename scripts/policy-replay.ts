// `npm run policy:replay -- --policies <file or folder>`: the calls recorded over a window decided
// again by the configuration's policies and by the proposed ones, to see what a policy change would
// do before it ships (shared/use-cases/replay-policies.ts). Reads only, locally or a deployed table.
// Exit 0 reported; 1 with --fail-on denied when a recorded call would become denied; 2 a wrong
// command or a proposed set that does not compile; 3 the recorded calls cannot be read.

import { readPolicyFiles } from '../infra/local/config-files.js';
import { localTableNames } from '../infra/local/dynamodb.js';
import { defaultConfigFile } from '../infra/local/options.js';
import { loadToolSnapshot } from '../infra/local/tool-snapshot.js';
import { systemClock } from '../shared/clock.js';
import { formatProblem } from '../shared/config/resolved.js';
import { proposedPolicies } from '../shared/control-plane/gateway-snapshot.js';
import { parseSince } from '../shared/executions/listing.js';
import { type ReplaySets, replayPolicies } from '../shared/use-cases/replay-policies.js';
import type { ReplayReport } from '../shared/use-cases/replay-report.js';
import {
  type CommandLine,
  dataFolderOf,
  readCommandLine,
  toolSnapshotOptions,
  toolSnapshotUsage,
} from './command-line.js';
import { targetOf, targetOptions, UsageError, usingTarget } from './executions-target.js';
import { replayLines } from './policy-replay-lines.js';

const usage = `Usage: npm run policy:replay -- --policies <file or folder> [--since 7d] [target] [--fail-on denied]
                              [--config <file>] [--offline] [--data-dir <dir>] [--json]

Decides each call recorded in the window again, by the configuration's policies and by the
proposed ones (compiled against the same tools), and prints per tool the calls whose decision would
change, with example execution ids, and each staff group's approval load per day. Writes nothing.

  --policies <path>      the proposed policies: a .cedar file, or a folder of them
  --since <time>         the window's start: a duration back from now (7d, 24h) or an ISO time
                         (default 7d)
  --fail-on denied       exit 1 when any recorded call would become denied (for CI)

Target (default --local), as npm run executions reads it:
  --local                the local runtime's store (through the running gateway, or its data folder)
  --table <name>         a deployed executions table, read only (AWS credentials and region from
                         the usual chain)
  --region <region>      the table's region
  --endpoint <url>       another DynamoDB endpoint (with --table; default table ${localTableNames.executions})
${toolSnapshotUsage}`;

const options = {
  ...toolSnapshotOptions,
  ...targetOptions,
  policies: { type: 'string' },
  since: { type: 'string' },
  'fail-on': { type: 'string' },
} as const;

type Values = CommandLine<typeof options>['values'];

/** What was compared, where the calls were read, and the report. */
interface Replayed {
  readonly source: string;
  readonly proposed: string;
  readonly config: string;
  readonly report: ReplayReport;
}

/** The window's start and the store to read, or why the command is wrong. */
const checked = (values: Values, now: number) => {
  if (values.policies === undefined || values.policies === '') throw new UsageError('--policies is required');
  if (values['fail-on'] !== undefined && values['fail-on'] !== 'denied')
    throw new UsageError(`--fail-on ${values['fail-on']}: the only value is denied`);
  const since = parseSince(values.since ?? '7d', now);
  if (!since.ok) throw new UsageError(`--since: ${since.error}`);
  return { policies: values.policies, since: since.value, target: targetOf(values, process.env) };
};

/** The calls of the window replayed, or the exit status of what went wrong (already said). */
const replayed = async (values: Values, now: number): Promise<Replayed | number> => {
  let wanted: ReturnType<typeof checked>;
  try {
    wanted = checked(values, now);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n${usage}`);
    return 2;
  }
  const proposedFiles = await readPolicyFiles(wanted.policies);
  if (!proposedFiles.ok) {
    process.stderr.write(`${proposedFiles.message}\n`);
    return 2;
  }
  const configFile = values.config ?? defaultConfigFile;
  const loaded = await loadToolSnapshot(configFile, process.env, values.offline === true, dataFolderOf(values));
  if (!loaded.ok) {
    process.stderr.write(`${loaded.message}\n`);
    return 2;
  }
  const { snapshot } = loaded;
  const proposed = proposedPolicies(snapshot, proposedFiles.files);
  if (!proposed.ok) {
    process.stderr.write(`${wanted.policies}: the proposed policies do not compile:\n`);
    for (const problem of proposed.problems) process.stderr.write(`  ${formatProblem(problem)}\n`);
    return 2;
  }
  return readAndReplay(
    wanted,
    { catalog: snapshot.catalog, current: snapshot.policy, proposed: proposed.policy },
    now,
    configFile,
  );
};

/** Reads the window's calls and replays them; 3 when they cannot be read. */
const readAndReplay = async (
  wanted: ReturnType<typeof checked>,
  sets: ReplaySets,
  now: number,
  configFile: string,
): Promise<Replayed | number> => {
  const read = await usingTarget(wanted.target, 'The recorded calls could not be read', async (opened) => ({
    source: opened.source,
    proposed: wanted.policies,
    config: configFile,
    report: await replayPolicies(opened.listing, sets, { since: wanted.since, now }),
  }));
  return read.ok ? read.value : 3;
};

const run = async (): Promise<number> => {
  const parsed = readCommandLine(options, usage);
  if ('exit' in parsed) return parsed.exit;
  const outcome = await replayed(parsed.values, systemClock.now());
  if (typeof outcome === 'number') return outcome;
  const { report } = outcome;
  const heading = `Replayed the calls in ${outcome.source}: ${outcome.proposed} beside the policies of ${outcome.config}`;
  process.stdout.write(
    parsed.values.json === true
      ? `${JSON.stringify(outcome, null, 2)}\n`
      : `${replayLines(report, heading).join('\n')}\n`,
  );
  return parsed.values['fail-on'] === 'denied' && report.moves.to_denied.count > 0 ? 1 : 0;
};

process.exitCode = await run();
