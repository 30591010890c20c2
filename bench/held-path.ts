// The reply to a held call, taken apart on the wire. Held calls come one at a time with a pause after
// each answer, long enough for the call's approval run to register and notify, so only the call itself
// runs on the runtime's thread while it is traced. Node's HTTP diagnostics channels mark, on that
// thread, when the agent's request arrives and its reply leaves, and when the gateway sends each of
// its own requests on the reply's path (the call's key, the pending place, the record, the approval
// run's start) and gets its answer back. The phases between those marks say how much of the reply is the gateway's
// own work and how much is waiting on the local store and Step Functions, which serve those requests
// on the same thread (their work is inside the waits).
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { LoadClient, Target } from './load.js';
import type { Plan } from './plan.js';
import { line, type Row, table } from './report.js';
import { median, ms } from './stats.js';

/** When one of the gateway's own requests went out and when its answer came back. */
interface Exchange {
  readonly sent: number;
  answered: number | null;
}

/** The gateway's requests on a held call's reply path. */
type Leg = 'key' | 'place' | 'record' | 'start';

/**
 * The leg a request of this operation is: a PutItem before the place is the call's key (the join of
 * a held call asked for again), one after it the record.
 */
const legOf = (operation: string | undefined, legs: Partial<Record<Leg, Exchange>>): Leg | undefined => {
  if (operation === 'UpdateItem') return 'place';
  if (operation === 'StartExecution') return 'start';
  if (operation === 'PutItem') return legs.place === undefined ? 'key' : 'record';
  return undefined;
};

interface CallInFlight {
  readonly request: IncomingMessage;
  readonly arrived: number;
  readonly legs: Partial<Record<Leg, Exchange>>;
}

/** One held call's marks, in ms since its request arrived. */
export interface HeldPath {
  /** The call's key, when the gateway claimed one (it does unless settings.join_pending_calls is off). */
  readonly keySent: number | null;
  readonly keyAnswered: number | null;
  readonly placeSent: number;
  readonly placeAnswered: number;
  /** The first of the record's write and the run's start to go out. */
  readonly recordSent: number;
  /** The last of their answers. */
  readonly recordAnswered: number;
  readonly replied: number;
}

const channels = {
  arrived: 'http.server.request.start',
  replied: 'http.server.response.finish',
  sent: 'http.client.request.start',
  answered: 'http.client.response.finish',
} as const;

/** Collects the marks of the held calls a runtime answers on `port` while it is open. */
export class HeldPathTrace {
  readonly paths: HeldPath[] = [];
  private current: CallInFlight | null = null;
  private readonly exchanges = new Map<ClientRequest, Exchange>();

  private readonly onArrived = (message: unknown) => {
    const { request } = message as { request: IncomingMessage };
    if (request.socket.localPort !== this.port || request.url !== '/mcp') return;
    this.exchanges.clear();
    this.current = { request, arrived: performance.now(), legs: {} };
  };

  private readonly onSent = (message: unknown) => {
    const current = this.current;
    if (current === null) return;
    const { request } = message as { request: ClientRequest };
    const target = request.getHeader('x-amz-target');
    const operation = typeof target === 'string' ? target.split('.').pop() : undefined;
    const leg = legOf(operation, current.legs);
    // The first of each: the approval run's own steps write the record again after the place.
    if (leg === undefined || current.legs[leg] !== undefined) return;
    const exchange: Exchange = { sent: performance.now(), answered: null };
    current.legs[leg] = exchange;
    this.exchanges.set(request, exchange);
  };

  private readonly onAnswered = (message: unknown) => {
    const { request } = message as { request: ClientRequest };
    const exchange = this.exchanges.get(request);
    if (exchange !== undefined) exchange.answered = performance.now();
  };

  private readonly onReplied = (message: unknown) => {
    const { request } = message as { request: IncomingMessage };
    const current = this.current;
    if (current === null || request !== current.request) return;
    this.current = null;
    const replied = performance.now();
    const { key, place, record, start } = current.legs;
    if (place?.answered == null || record?.answered == null || start?.answered == null) return;
    const since = (at: number) => at - current.arrived;
    this.paths.push({
      keySent: key === undefined ? null : since(key.sent),
      keyAnswered: key?.answered == null ? null : since(key.answered),
      placeSent: since(place.sent),
      placeAnswered: since(place.answered),
      recordSent: since(Math.min(record.sent, start.sent)),
      recordAnswered: since(Math.max(record.answered, start.answered)),
      replied: since(replied),
    });
  };

  constructor(private readonly port: number) {
    subscribe(channels.arrived, this.onArrived);
    subscribe(channels.sent, this.onSent);
    subscribe(channels.answered, this.onAnswered);
    subscribe(channels.replied, this.onReplied);
  }

  close(): void {
    unsubscribe(channels.arrived, this.onArrived);
    unsubscribe(channels.sent, this.onSent);
    unsubscribe(channels.answered, this.onAnswered);
    unsubscribe(channels.replied, this.onReplied);
  }
}

/** The medians of a traced held reply's phases, in ms. */
export interface HeldPathFigures {
  readonly calls: number;
  /** From the request's arrival to the reply leaving, at the runtime. */
  readonly total: number;
  /** The waits: the key's and the pending place's round trips, and the record's and the run start's together. */
  readonly waits: number;
}

/**
 * Sends `count` held calls to the runtime behind `target` (on `port`), one at a time, `pauseMs`
 * apart, and prints where each reply's time went.
 */
export const traceHeldPath = async (
  load: LoadClient,
  target: Target,
  port: number,
  { heldPathCalls: count, heldPathPauseMs: pauseMs }: Pick<Plan, 'heldPathCalls' | 'heldPathPauseMs'>,
): Promise<HeldPathFigures> => {
  const trace = new HeldPathTrace(port);
  let samples: number[];
  try {
    ({ samples } = await load.run({ kind: 'latency', target, warmup: 0, count, pauseMs }));
  } finally {
    trace.close();
  }
  const { paths } = trace;
  if (paths.length === 0) throw new Error('no held call was traced from its request to its reply');
  const of = (phase: (path: HeldPath) => number) => median(paths.map(phase));
  const before = of((path) => path.keySent ?? path.placeSent);
  const keyWait = of((path) => (path.keySent === null ? 0 : (path.keyAnswered ?? path.placeSent) - path.keySent));
  const toPlace = of((path) => path.placeSent - (path.keyAnswered ?? path.keySent ?? path.placeSent));
  const placeWait = of((path) => path.placeAnswered - path.placeSent);
  const between = of((path) => path.recordSent - path.placeAnswered);
  const recordWait = of((path) => path.recordAnswered - path.recordSent);
  const after = of((path) => path.replied - path.recordAnswered);
  const total = of((path) => path.replied);
  line(
    `the reply's path, one call at a time (${pauseMs} ms after each answer), at the runtime; medians of ` +
      `${paths.length} calls:`,
  );
  table(
    [
      ["request in → the call's key sent (reading, policy)", ms(before)],
      ["  waiting: the call's key claimed (PutItem)", ms(keyWait)],
      ['→ the pending place sent (the hold)', ms(toPlace)],
      ['  waiting: the pending place taken (UpdateItem)', ms(placeWait)],
      ['→ the record and the approval run start sent', ms(between)],
      ['  waiting: both answered (PutItem, StartExecution)', ms(recordWait)],
      ['→ the reply sent', ms(after)],
      ['request in → reply sent', ms(total)],
    ],
    '     ',
  );
  line(
    `the waits (the local store and Step Functions serve them on this same thread): ${ms(keyWait + placeWait + recordWait)}; ` +
      `the agent's client timed these replies at p50 ${ms(median(samples))}`,
  );
  return { calls: paths.length, total, waits: keyWait + placeWait + recordWait };
};

/** The summary's row for the traced path (reported: the target is the p50 of the rounds). */
export const heldPathRow = (path: HeldPathFigures): Row => ({
  what: heldPathWhat,
  measured: `${ms(path.total)}, waits ${ms(path.waits)} (${path.calls} calls)`,
  target: 'reported',
  mark: 'info',
});

export const heldPathWhat =
  '  one call at a time, at the runtime: the reply, and its waits on the store and Step Functions';
