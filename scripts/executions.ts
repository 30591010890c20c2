// `npm run executions`: lists the gateway's executions for audit, read-only, a page at a time:
// who asked, the decision and its policies, who decided, and the outcome. Secrets stay sealed: only
// the redacted arguments are shown, never a sealed value. Exit 0 listed, 1 the store could not be
// read, 2 the command was wrong. `settle` (./executions-settle.ts) settles an unknown outcome.
import { parseArgs } from 'node:util';
import { localAwsProfile } from '../infra/local/aws-config-file.js';
import { localTableNames } from '../infra/local/dynamodb.js';
import type { ListingTarget } from '../infra/local/listing-target.js';
import { systemClock } from '../shared/clock.js';
import { errorText } from '../shared/errors.js';
import type { Execution } from '../shared/executions/execution.js';
import {
  type AuditLine,
  auditLineOf,
  type ExecutionQuery,
  InvalidCursorError,
  maxListingLimit,
  parseSince,
  parseStatus,
} from '../shared/executions/listing.js';
import type { ExecutionPage } from '../shared/executions/store.js';
import { ExecutionStatus } from '../shared/result.js';
import { escapeInvisible } from '../shared/text/invisible.js';
import { textTable } from './command-line.js';
import { settleCommand } from './executions-settle.js';
import { printApprovalLoad } from './executions-stats.js';
import { targetOf, targetOptions, UsageError, usingTarget } from './executions-target.js';

const usage = `Usage: npm run executions -- [target] [filters] [--limit N] [--cursor C] [--json]

Lists executions, newest first, one page at a time. Read-only (but for --index-earlier-calls):
nothing is changed, and secret argument values stay sealed (the redacted arguments are shown in --json, never a sealed value).

Target (default --local):
  --local                the local runtime's store (npm start); while that gateway runs, the
                         listing reads through its store; otherwise the data folder is locked for
                         the read (a gateway started meanwhile is refused until it ends)
  --data-dir <folder>    the local data folder (GATEWAY_DATA_DIR, default .gateway-data)
  --table <name>         a deployed executions table (AWS credentials and region from the usual
                         AWS_PROFILE / AWS_REGION / instance role chain)
  --region <region>      the table's region
  --endpoint <url>       another DynamoDB endpoint (with --table; default table ${localTableNames.executions}),
                         e.g. a gateway started with --memory, read with
                         AWS_CONFIG_FILE=<its aws-config file> AWS_PROFILE=${localAwsProfile}

Filters:
  --agent <id>           one agent's calls, through the by-agent index
  --status <status>      one of ${ExecutionStatus.options.join(', ')}
  --tool <name>          one tool, by its full name (erp.purchase_orders.create)
  --since <time>         calls made at or after an ISO time (2026-11-29T12:00:00Z) or within a
                         duration back from now (90m, 24h, 7d)

Without --agent every call is listed through the by-time index, newest first across pages too. A
page may hold fewer than --limit while more follow: continue with the cursor printed at its end.

  --limit <n>            calls per page, 1 to ${maxListingLimit} (default 20)
  --cursor <c>           continue where the previous page ended (same target and filters)
  --json                 one JSON object per call per line; a last line {"next_cursor": …} when
                         more follow

The approval load per group of approvers, instead of a listing:
  --stats                over the calls held since --since (default 7d): per group (the group of
                         the approver who decided, else the policy's @approvers group), how many
                         were held and decided, the time from request to decision at p50 and p90,
                         how many wait now, and the share of those ended that expired; --json for
                         one JSON object

Settling a call that ended unknown, once you checked the system (see settle --help):
  settle <execution id> --outcome succeeded|failed --reason "<what you found>" [target]

Once, after deploying the version that added an index (--table or --endpoint only):
  --index-earlier-calls  writes the by-time index's attributes on the calls recorded before it, so
                         listings without --agent show them too, and enters the calls that ended
                         unknown before settling existed in UnknownOutcomes' count
`;

type Parsed = {
  readonly target: ListingTarget;
  readonly query: ExecutionQuery;
  readonly json: boolean;
  readonly indexEarlier: boolean;
  /** --stats: the approval load of the calls held since this instant, instead of a listing. */
  readonly statsSince: string | null;
};

/** The window of --stats (--since, 7 days by default); it takes no listing filter or page option. */
const statsWindow = (values: Readonly<Record<string, string | boolean | undefined>>): string => {
  const listingOnly = ['agent', 'status', 'tool', 'limit', 'cursor', 'index-earlier-calls'];
  const given = listingOnly.find((name) => values[name] !== undefined);
  if (given !== undefined) throw new UsageError(`--stats counts every held call of the window; it takes no --${given}`);
  const since = parseSince(typeof values.since === 'string' ? values.since : '7d', systemClock.now());
  if (!since.ok) throw new UsageError(`--since: ${since.error}`);
  return since.value;
};

const parse = (argv: readonly string[], environment: NodeJS.ProcessEnv): Parsed | 'help' => {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      ...targetOptions,
      agent: { type: 'string' },
      status: { type: 'string' },
      tool: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      json: { type: 'boolean' },
      'index-earlier-calls': { type: 'boolean' },
      stats: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  });
  if (values.help === true) return 'help';
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const target = targetOf(values, environment);
  if (values.stats === true)
    return {
      target,
      query: { limit: 1 },
      json: values.json === true,
      indexEarlier: false,
      statsSince: statsWindow(values),
    };
  const indexEarlier = values['index-earlier-calls'] === true;
  if (indexEarlier && target.kind !== 'table')
    throw new UsageError('--index-earlier-calls is for a deployed table (--table) or an endpoint (--endpoint)');

  const limitText = values.limit ?? '20';
  const limit = /^\d+$/.test(limitText) ? Number(limitText) : Number.NaN;
  if (!(limit >= 1 && limit <= maxListingLimit)) {
    throw new UsageError(`--limit ${limitText}: expected a whole number from 1 to ${maxListingLimit}`);
  }
  const status = values.status === undefined ? undefined : parseStatus(values.status);
  if (status !== undefined && !status.ok) throw new UsageError(`--status: ${status.error}`);
  const since = values.since === undefined ? undefined : parseSince(values.since, systemClock.now());
  if (since !== undefined && !since.ok) throw new UsageError(`--since: ${since.error}`);
  for (const name of ['agent', 'tool', 'cursor'] as const) {
    if (values[name] === '') throw new UsageError(`--${name} needs a value`);
  }
  const query: ExecutionQuery = {
    limit,
    ...(values.agent === undefined ? {} : { agent: values.agent }),
    ...(status === undefined ? {} : { status: status.value }),
    ...(values.tool === undefined ? {} : { tool: values.tool }),
    ...(since === undefined ? {} : { since: since.value }),
    ...(values.cursor === undefined ? {} : { cursor: values.cursor }),
  };
  return { target, query, json: values.json === true, indexEarlier, statsSince: null };
};

/** A cell as a terminal shows it: invisible and control characters written as escapes. */
const cell = (value: string | null): string => (value === null || value === '' ? '-' : escapeInvisible(value));

const columns = [
  'CREATED',
  'EXECUTION',
  'AGENT',
  'TOOL',
  'STATUS',
  'CODE',
  'DECISION',
  'POLICIES',
  'DECIDED BY',
  'DECIDED AT',
  'APPROVALS',
  'ESCALATED',
];

/** Each approval as who(group)@when, in order. */
const approvalsCell = (line: AuditLine): string =>
  line.approvals.map((approval) => `${approval.by}(${approval.group})@${approval.at}`).join(',');

/** The escalation: to whom and when (to whom, and "-", while it has not happened). */
const escalationCell = (line: AuditLine): string =>
  line.escalated_to === null ? '' : `${line.escalated_to}@${line.escalated_at ?? '-'}`;

const rowOf = (execution: Execution): string[] => {
  const line = auditLineOf(execution);
  return [
    line.created_at,
    line.execution_id,
    line.agent_id,
    line.tool,
    // A settled unknown outcome says so: the status is the operator's finding, not the system's answer.
    line.settlement === null ? line.status : `${line.status}(settled)`,
    line.code,
    line.decision,
    line.policies.join(','),
    line.decided_by,
    line.decided_at,
    approvalsCell(line),
    escalationCell(line),
  ].map(cell);
};

const table = (executions: readonly Execution[]): string => textTable([columns, ...executions.map(rowOf)]);

/** One JSON line; invisible characters escaped (JSON escapes, so it parses to the same value). */
const jsonLine = (value: unknown): string => escapeInvisible(JSON.stringify(value));

/** One page of the listing: a table for people, or one JSON line per call (and the next cursor). */
const printPage = (source: string, page: ExecutionPage, json: boolean) => {
  if (json) {
    for (const execution of page.items) process.stdout.write(`${jsonLine(auditLineOf(execution))}\n`);
    if (page.next !== undefined) process.stdout.write(`${jsonLine({ next_cursor: page.next })}\n`);
    return;
  }
  process.stdout.write(`Executions in ${source}\n`);
  process.stdout.write(page.items.length === 0 ? 'None on this page.\n' : `${table(page.items)}\n`);
  process.stdout.write(
    page.next === undefined ? '(end)\n' : `Next page: npm run executions -- <the same options> --cursor ${page.next}\n`,
  );
};

const run = async (): Promise<number> => {
  const argv = process.argv.slice(2);
  if (argv[0] === 'settle') return settleCommand(argv.slice(1), process.env);
  let parsed: Parsed | 'help';
  try {
    parsed = parse(argv, process.env);
  } catch (error) {
    process.stderr.write(`${errorText(error)} (see npm run executions -- --help)\n`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(usage);
    return 0;
  }
  const { target, query, json, indexEarlier, statsSince } = parsed;
  const done = await usingTarget(target, 'The executions could not be read', async (opened) => {
    try {
      if (indexEarlier) {
        const indexed = await opened.indexEarlierCalls();
        process.stdout.write(`Indexed ${indexed} earlier call(s) in ${opened.source}.\n`);
        return 0;
      }
      if (statsSince !== null) {
        await printApprovalLoad(opened, statsSince, json, (text) => process.stdout.write(text));
        return 0;
      }
      printPage(opened.source, await opened.listing.list(query), json);
      return 0;
    } catch (error) {
      if (!(error instanceof InvalidCursorError)) throw error;
      process.stderr.write(`--cursor: ${error.message}\n`);
      return 2;
    }
  });
  return done.ok ? done.value : 1;
};

process.exitCode = await run();
