// policy:replay: the calls recorded over a window decided again, by the configuration's policies and
// by a proposed set compiled against the same catalog, so an operator sees what a policy change
// would do to real traffic before it ships. It only reads: a call whose decision would read a
// secret value is counted as not replayable, never opened and never guessed.
import { type Catalog, isJsonObject, type JsonObject, type ToolWithValidator } from '../catalog/tool.js';
import type { Execution } from '../executions/execution.js';
import { callsSince, type ExecutionListing } from '../executions/listing.js';
import { parseJsonPointer } from '../json-pointer.js';
import type { PolicyDecision, PolicyEngine } from '../policy/engine.js';
import type { HumanStep } from '../policy/human-step.js';
import { parseExactJson } from '../wire/exact-json.js';
import {
  type NotReplayable,
  type ReplayMove,
  type ReplayReport,
  ReplayTally,
  type ReplayWindow,
  reportOf,
} from './replay-report.js';
import { requesterOf } from './run-once.js';

/** The catalog both sets were compiled against, and the two sets. */
export interface ReplaySets {
  readonly catalog: Catalog;
  readonly current: PolicyEngine;
  readonly proposed: PolicyEngine;
}

/** The argument fields the sets read (a secret in one of them is read); 'all' when a set reads them whole. */
const fieldsReadBy = (sets: ReplaySets): ReadonlySet<string> | 'all' => {
  const read = [sets.current.checked.argumentsRead, sets.proposed.checked.argumentsRead];
  return read.some((fields) => fields === 'all') ? 'all' : new Set(read.flatMap((fields) => [...fields]));
};

/**
 * Whether a decision would read one of the call's secret values: a policy reads the top-level field
 * it sits in. A record that holds sealed values but not where they are counts as read.
 */
const readsSecret = (execution: Execution, read: ReadonlySet<string> | 'all'): boolean => {
  const pointers = execution.secret_pointers;
  if (pointers === null) return execution.sealed_arguments !== null;
  return pointers.some((pointer) => {
    const field = parseJsonPointer(pointer)?.[0];
    return read === 'all' || field === undefined || read.has(field);
  });
};

type Replayable =
  | { readonly kind: 'replay'; readonly tool: ToolWithValidator; readonly args: JsonObject }
  | { readonly kind: 'not_replayable'; readonly reason: NotReplayable };

/** The recorded arguments to decide again, or why the call is counted apart. */
const replayableOf = (execution: Execution, sets: ReplaySets, read: ReadonlySet<string> | 'all'): Replayable => {
  if (execution.arguments_json === null) return { kind: 'not_replayable', reason: 'no_arguments' };
  const tool = sets.catalog.byName.get(execution.tool);
  if (tool === undefined) return { kind: 'not_replayable', reason: 'unknown_tool' };
  if (readsSecret(execution, read)) return { kind: 'not_replayable', reason: 'secret' };
  const args = parseExactJson(execution.arguments_json);
  return isJsonObject(args) ? { kind: 'replay', tool, args } : { kind: 'not_replayable', reason: 'no_arguments' };
};

type Verdict = 'run' | 'held' | 'denied';

const verdictOf = (decision: PolicyDecision): Verdict =>
  decision.kind === 'deny' ? 'denied' : decision.step === null ? 'run' : 'held';

/** The human step a decision asks for (null when it runs at once or is denied). */
const stepOf = (decision: PolicyDecision): HumanStep | null => (decision.kind === 'allow' ? decision.step : null);

/** How the decision moves, or null when the call would be decided the same way. */
const moveOf = (today: PolicyDecision, proposed: PolicyDecision): ReplayMove | null => {
  const [before, after] = [verdictOf(today), verdictOf(proposed)];
  if (after === 'denied') return before === 'denied' ? null : 'to_denied';
  if (before === 'denied') return 'from_denied';
  if (before === 'run') return after === 'held' ? 'run_to_held' : null;
  if (after === 'run') return 'held_to_run';
  // Both held: the same group, customer step, quorum, escalation and sign-in rules, or another step.
  return JSON.stringify(stepOf(today)) === JSON.stringify(stepOf(proposed)) ? null : 'held_step_changed';
};

/** Decides one recorded call by both sets and counts how it moves. */
const replayOne = (execution: Execution, sets: ReplaySets, read: ReadonlySet<string> | 'all', tally: ReplayTally) => {
  tally.read += 1;
  const replayable = replayableOf(execution, sets, read);
  if (replayable.kind === 'not_replayable') return tally.notReplayable[replayable.reason].add(execution.execution_id);
  const { tool, args } = replayable;
  const agent = requesterOf(execution);
  const today = sets.current.decide(agent, tool, args);
  const proposed = sets.proposed.decide(agent, tool, args);
  // A hidden value no policy reads still stands in the record as "[REDACTED]": when that text
  // cannot be held by the policy's types, the decision cannot be made without the secret.
  const secretInTheWay = (execution.secret_pointers?.length ?? 0) > 0 && [today, proposed].some(notRepresentable);
  if (secretInTheWay) return tally.notReplayable.secret.add(execution.execution_id);
  const counts = tally.toolOf(execution.tool);
  counts.replayed += 1;
  tally.held(today, 'today');
  tally.held(proposed, 'proposed');
  const move = moveOf(today, proposed);
  if (move === null) {
    counts.unchanged += 1;
    return;
  }
  counts.moves[move].add(execution.execution_id);
  tally.moves[move].add(execution.execution_id);
};

const notRepresentable = (decision: PolicyDecision): boolean =>
  decision.kind === 'deny' && decision.reason === 'not_representable';

/** Every call recorded since the window's start, page after page, deciding each by both sets. */
export const replayPolicies = async (
  listing: ExecutionListing,
  sets: ReplaySets,
  window: ReplayWindow,
): Promise<ReplayReport> => {
  const read = fieldsReadBy(sets);
  const tally = new ReplayTally();
  for await (const execution of callsSince(listing, window.since)) replayOne(execution, sets, read, tally);
  return reportOf(tally, window);
};
