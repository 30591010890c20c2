// Safe retries: a call under a key (./call-tool.ts picks it: the agent's idempotency key, or a held
// call's own tool and arguments) runs only if it claims the key; otherwise it answers the call the
// key names. The first call's answer, or its state as it is; a duplicate of a call still running
// waits for its outcome (on the call itself in this process, by a few store reads otherwise) and
// never sends. A key whose call can no longer come, or (for a held call) no longer waits, is taken
// over by one conditional write.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.js';
import type { CallKey } from '../executions/call-keys.js';
import { type Execution, type ExecutionAnswer, executionAnswerOf } from '../executions/execution.js';
import type { ExecutionStore } from '../executions/store.js';
import { mayStillBeRecorded } from '../ids.js';
import type { ResultObject } from '../result.js';
import { claimGraceMs } from './run-once.js';

/**
 * What a key stands for: an idempotency key answers its call for as long as it is kept; a held
 * call's own key answers it only while it waits for approval.
 */
export type KeyKind = 'idempotency' | 'held';

/**
 * The call under its key as it ended: its answer (with the receipt an earlier, approved call was
 * sent with), or the key names a call of another tool or arguments.
 */
export type KeyedAnswer = ({ readonly kind: 'answer' } & ExecutionAnswer) | { readonly kind: 'reused' };

interface KeyedDeps {
  readonly store: ExecutionStore;
  readonly clock: Clock;
}

/** A call of this process under its key, for duplicates arriving meanwhile to wait on. */
interface InFlight {
  readonly tool: string;
  readonly argumentsHash: string;
  readonly answer: Promise<KeyedAnswer>;
}

/** The calls in flight under a key, per store (one store per process; tests open several). */
const inFlight = new WeakMap<ExecutionStore, Map<string, InFlight>>();

const flightsOf = (store: ExecutionStore): Map<string, InFlight> => {
  const known = inFlight.get(store);
  if (known !== undefined) return known;
  const flights = new Map<string, InFlight>();
  inFlight.set(store, flights);
  return flights;
};

/** Store reads a duplicate makes at most while it waits, and the pauses between them. */
const maxWaitReads = 100;
const firstPauseMs = 25;
const longestPauseMs = 1_000;

const sameCall = (key: CallKey, other: { readonly tool: string; readonly arguments_hash: string }): boolean =>
  key.tool === other.tool && key.arguments_hash === other.arguments_hash;

/** Whether a call still runs: claimed for sending, its outcome not recorded yet. */
const running = (execution: Execution): boolean => execution.status === 'approved' && execution.claimed_at !== null;

/** Whether a held call still waits for its decision (past its approval time it can only expire). */
const waiting = (execution: Execution, now: number): boolean =>
  execution.status === 'pending_approval' && (execution.expires_at === null || Date.parse(execution.expires_at) > now);

/**
 * The record a key names once it is there (and, with `outcome`, no longer running, or past its
 * deadline as it is); undefined when it never came and can no longer come. Bounded store reads
 * with growing pauses: this is the wait for a call of another process.
 */
const recordOf = async (deps: KeyedDeps, owner: CallKey, outcome: boolean): Promise<Execution | undefined> => {
  let pauseMs = firstPauseMs;
  for (let read = 1; read <= maxWaitReads; read += 1) {
    const execution = await deps.store.getOwned({ execution_id: owner.execution_id, agent_id: owner.agent_id });
    const now = deps.clock.now();
    if (execution === undefined && !mayStillBeRecorded(owner.execution_id, now)) return undefined;
    if (execution !== undefined && (!outcome || !running(execution) || overdue(execution, now))) return execution;
    if (execution !== undefined && read === maxWaitReads) return execution;
    await sleep(pauseMs);
    pauseMs = Math.min(pauseMs * 2, longestPauseMs);
  }
  throw new Error('The call this key names was still not recorded; nothing was sent.');
};

/** Whether a running call is past its deadline (and the grace before its claim is settled). */
const overdue = (execution: Execution, now: number): boolean =>
  execution.deadline_at !== null && now > Date.parse(execution.deadline_at) + claimGraceMs;

/**
 * What a key that names another execution answers: that call's answer (waited for while it runs
 * or is being recorded), a refusal when it was another call, or null when the key may be taken
 * over (its call never came, or a held call's no longer waits).
 */
const answerOfOwner = async (
  deps: KeyedDeps,
  key: CallKey,
  kind: KeyKind,
  owner: CallKey,
): Promise<KeyedAnswer | null> => {
  if (!sameCall(key, owner)) return { kind: 'reused' };
  const execution = await recordOf(deps, owner, kind === 'idempotency');
  if (execution === undefined) return null;
  if (kind === 'held' && !waiting(execution, deps.clock.now())) return null;
  return { kind: 'answer', ...executionAnswerOf(execution) };
};

const flightId = (key: Pick<CallKey, 'agent_id' | 'digest'>): string => `${key.agent_id}\u0000${key.digest}`;

/** Claims the key (taking it over from a call it may no longer answer), or answers the call it names. */
const claimOrAnswer = async (deps: KeyedDeps, key: CallKey, kind: KeyKind): Promise<KeyedAnswer | 'claimed'> => {
  let replacing: string | undefined;
  // Each round loses only to a call that claimed or replaced the key meanwhile; a few are plenty.
  for (let round = 0; round < 5; round += 1) {
    const claim = await deps.store.claimCallKey(key, replacing);
    if (claim.kind === 'claimed') return 'claimed';
    if (claim.current === undefined) {
      replacing = undefined;
      continue;
    }
    const answered = await answerOfOwner(deps, key, kind, claim.current);
    if (answered !== null) return answered;
    replacing = claim.current.execution_id;
  }
  throw new Error('The call key kept changing hands; the call was not made.');
};

/**
 * Runs `run` if this call claims its key, else answers the call the key names. Duplicates in this
 * process wait on the call itself; the store is read only for calls of other processes.
 */
export const underCallKey = async (
  deps: KeyedDeps,
  key: CallKey,
  kind: KeyKind,
  run: () => Promise<ResultObject>,
): Promise<KeyedAnswer> => {
  const flights = flightsOf(deps.store);
  const id = flightId(key);
  const earlier = flights.get(id);
  if (earlier !== undefined && sameCall(key, { tool: earlier.tool, arguments_hash: earlier.argumentsHash })) {
    const answered = await earlier.answer.catch(() => null);
    if (answered !== null && (kind === 'idempotency' || (answered.kind === 'answer' && held(answered.result)))) {
      return answered;
    }
  }
  const answer = (async (): Promise<KeyedAnswer> => {
    const claimed = await claimOrAnswer(deps, key, kind);
    return claimed === 'claimed' ? { kind: 'answer', result: await run(), receipt: null } : claimed;
  })();
  const flight = { tool: key.tool, argumentsHash: key.arguments_hash, answer };
  flights.set(id, flight);
  try {
    return await answer;
  } finally {
    if (flights.get(id) === flight) flights.delete(id);
  }
};

/** Whether an answer is one a held call's duplicate may join: the call is still held. */
const held = (result: ResultObject): boolean => result.status === 'pending_approval';
