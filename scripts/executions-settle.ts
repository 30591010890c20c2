// `npm run executions -- settle <id> --outcome succeeded|failed --reason "…"`: an operator who
// checked the system settles a call that ended unknown, once, on the same targets as the listing.
// Exit 0 settled, 1 the store could not be read or written, 2 the command was wrong, 3 no such
// execution, 4 the call did not end unknown, 5 it was settled already (by someone else, perhaps
// a moment ago).
import { parseArgs } from 'node:util';
import type { ListingTarget } from '../infra/local/listing-target.js';
import { systemClock } from '../shared/clock.js';
import { errorText } from '../shared/errors.js';
import { maxSettlementReasonLength, SettledOutcome } from '../shared/executions/execution.js';
import { auditLineOf } from '../shared/executions/listing.js';
import { isUuid } from '../shared/ids.js';
import { escapeInvisible } from '../shared/text/invisible.js';
import {
  type SettlementAnswer,
  type SettlementRequest,
  settlementReason,
  settleUnknown,
} from '../shared/use-cases/settle-unknown.js';
import { targetOf, targetOptions, UsageError, usingTarget } from './executions-target.js';

export const settleUsage = `Usage: npm run executions -- settle <execution id> --outcome succeeded|failed --reason "<what you found>" [target] [--json]

Settles a call that ended unknown (a write was sent and no reliable answer came) as the outcome you
found in the system: the agent's status tool then answers it, and the UnknownOutcomes figure no
longer counts it. Only an unknown call is settled, and once. The record keeps its history (unknown,
then the settled status) and who settled it, when and why.

  --outcome <outcome>    succeeded (the system did it) or failed (it did not)
  --reason <text>        what you found, for the audit (required; at most ${maxSettlementReasonLength} characters, no
                         line breaks or other control characters; never shown to the agent)
  --json                 the settled call as one JSON line, as the listing's --json shows it

Target: as the listing's (--local, --data-dir, --table with --region, --endpoint). You are recorded
as the OS user locally and with --endpoint, and as the AWS caller's ARN (STS) with --table.

Exit: 0 settled, 1 the store could not be read or written, 2 the command was wrong, 3 no such
execution, 4 the call did not end unknown, 5 it was settled already.
`;

/** Exit codes of the refusals, each its own so a script can tell them apart. */
export const settleExits = { not_found: 3, not_unknown: 4, already_settled: 5 } as const;

type ParsedSettle = {
  readonly target: ListingTarget;
  readonly request: Omit<SettlementRequest, 'by'>;
  readonly json: boolean;
};

const parseSettle = (argv: readonly string[], environment: NodeJS.ProcessEnv): ParsedSettle | 'help' => {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      ...targetOptions,
      outcome: { type: 'string' },
      reason: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  });
  if (values.help === true) return 'help';
  const [id, extra] = positionals;
  if (id === undefined) throw new UsageError('settle needs the execution id');
  if (extra !== undefined) throw new UsageError(`unexpected argument ${extra}`);
  if (!isUuid(id)) throw new UsageError(`"${escapeInvisible(id)}" is not an execution id (a UUID)`);
  const outcome = SettledOutcome.safeParse(values.outcome);
  if (!outcome.success) {
    throw new UsageError(
      values.outcome === undefined
        ? '--outcome is required: succeeded or failed'
        : `--outcome ${escapeInvisible(values.outcome)}: expected succeeded or failed`,
    );
  }
  if (values.reason === undefined) throw new UsageError('--reason is required: say what you found in the system');
  const reason = settlementReason(values.reason);
  if (!reason.ok) throw new UsageError(`--reason: ${reason.error}`);
  const request = { executionId: id.toLowerCase(), outcome: outcome.data, reason: reason.value };
  return { target: targetOf(values, environment), request, json: values.json === true };
};

/** What the operator reads of the answer, and the exit code. */
const reportOf = (answer: SettlementAnswer, id: string, json: boolean): { text: string; exit: number } => {
  if (answer.kind === 'not_found') return { text: `No execution ${id} in this store.\n`, exit: settleExits.not_found };
  const { execution } = answer;
  if (answer.kind === 'not_unknown') {
    return {
      text: `Execution ${id} is ${execution.status}, not unknown: only an unknown outcome is settled.\n`,
      exit: settleExits.not_unknown,
    };
  }
  const settlement = execution.settlement;
  const told = settlement === null ? '' : ` as ${settlement.outcome} by ${settlement.by} at ${settlement.at}`;
  if (answer.kind === 'already_settled') {
    return {
      text: escapeInvisible(`Execution ${id} was settled already${told}.\n`),
      exit: settleExits.already_settled,
    };
  }
  if (json) return { text: `${escapeInvisible(JSON.stringify(auditLineOf(execution)))}\n`, exit: 0 };
  return { text: escapeInvisible(`Settled execution ${id}${told} (it was unknown).\n`), exit: 0 };
};

/** Runs the settle subcommand; resolves to its exit code. */
export const settleCommand = async (argv: readonly string[], environment: NodeJS.ProcessEnv): Promise<number> => {
  let parsed: ParsedSettle | 'help';
  try {
    parsed = parseSettle(argv, environment);
  } catch (error) {
    process.stderr.write(`${errorText(error)} (see npm run executions -- settle --help)\n`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(settleUsage);
    return 0;
  }
  const settled = await usingTarget(parsed.target, 'The execution could not be settled', async (opened) => {
    const by = await opened.operator();
    const answer = await settleUnknown({ store: opened.store, clock: systemClock }, { ...parsed.request, by });
    const report = reportOf(answer, parsed.request.executionId, parsed.json);
    (report.exit === 0 ? process.stdout : process.stderr).write(report.text);
    return report.exit;
  });
  return settled.ok ? settled.value : 1;
};
