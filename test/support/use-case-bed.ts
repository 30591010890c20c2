// A bench for use-case tests: the in-memory store, a clock the test moves, the real configuration
// loader and Cedar policy (a small ERP whose large orders finance approves), and fake ports that
// record what they are asked: system calls, approval runs started and signalled, notices.
//
// Long: one fake per port a use-case takes, each recording what it is asked, beside the bed that wires them.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { AesSealer } from '../../shared/adapters/aes-sealer.js';
import { KeyReceiptSigner } from '../../shared/adapters/key-receipt-signer.js';
import { MemoryExecutionStore } from '../../shared/adapters/memory/execution-store.js';
import type { ApprovalRunOutcome, ApprovalRunStart, ApprovalRunStarted } from '../../shared/approvals/approval-runs.js';
import type { Approver } from '../../shared/approvals/approver.js';
import type { HeldCallNotice } from '../../shared/approvals/notifier.js';
import { readArguments, type StrictArguments } from '../../shared/arguments/strict-json.js';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import { formatProblem } from '../../shared/config/resolved.js';
import type { ControlPlaneState } from '../../shared/control-plane/control-plane.js';
import type { GatewaySnapshot } from '../../shared/control-plane/gateway-snapshot.js';
import { loadSnapshot } from '../../shared/control-plane/snapshot.js';
import type { Execution } from '../../shared/executions/execution.js';
import type { IdSource } from '../../shared/ids.js';
import type { OutboundRequest, OutboundResult } from '../../shared/invoke/system-client.js';
import type { ApprovalServices } from '../../shared/use-cases/approval-services.js';
import { type DecisionRequest, decide } from '../../shared/use-cases/approver-decisions.js';
import { type CallToolDeps, callTool } from '../../shared/use-cases/call-tool.js';
import { unusedPort } from './approval-deps.js';
import { ManualClock } from './clock.js';

/** The gateway's public URL on the bench: the receipts' issuer. */
export const benchGatewayUrl = 'https://gateway.test';

/** The bench's receipt key (one per test process: generating a P-256 key takes a moment). */
export const testReceiptSigner = new KeyReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);

/** The approval time of the bench's configuration. */
export const approvalMs = 60 * 60_000;
/** The ERP's timeout (each call's deadline once claimed). */
export const systemTimeoutMs = 10_000;

export const tools = {
  /** GET, a read: runs at once for procurement, held for finance when the vendor is "restricted". */
  list: 'erp.orders.list',
  /** POST, a write: below 1000 at once, from 1000 held for finance, 0 or less refused; api_key is a secret. */
  create: 'erp.orders.create',
} as const;

const configText = (options: {
  readonly withCreate: boolean;
  readonly pendingCalls: number;
  readonly retention: string | undefined;
}): string =>
  [
    'settings:',
    `  approval_time: ${approvalMs / 60_000}m`,
    ...(options.retention === undefined ? [] : [`  retention: ${options.retention}`]),
    `  limits: { pending_calls: ${options.pendingCalls} }`,
    'systems:',
    '  - key: erp',
    '    base_url: http://erp.test',
    `    timeout: ${systemTimeoutMs / 1000}s`,
    '    amount_fields: [amount]',
    ...(options.withCreate ? [] : ['    disabled_tools: [erp.orders.create]']),
    '    operations:',
    '      - id: orders.list',
    '        method: GET',
    '        path: /orders',
    '        description: Lists orders.',
    '        input_schema:',
    '          type: object',
    '          properties:',
    '            vendor: { type: string }',
    '      - id: orders.create',
    '        method: POST',
    '        path: /orders',
    '        description: Creates an order.',
    '        input_schema:',
    '          type: object',
    '          required: [vendor, amount]',
    '          properties:',
    '            vendor: { type: string }',
    '            amount: { type: string }',
    // A secret by its name: stored redacted and sealed, opened only to send.
    '            api_key: { type: string }',
    'policies:',
    '  - policies.cedar',
    '',
  ].join('\n');

/** The policies as first loaded. */
const standardPolicy = `
@id("lookups")
permit (principal in Group::"procurement", action == Action::"erp.orders.list", resource)
unless { context.arguments has vendor && context.arguments.vendor == "restricted" };

@id("restricted-lookups")
@approval("staff")
@approvers("finance")
permit (principal in Group::"procurement", action == Action::"erp.orders.list", resource)
when { context.arguments has vendor && context.arguments.vendor == "restricted" };

@id("small-orders")
permit (principal in Group::"procurement", action == Action::"erp.orders.create", resource)
when { context.arguments.amount.lessThan(decimal("1000.0")) };

@id("large-orders")
@approval("staff")
@approvers("finance")
permit (principal in Group::"procurement", action == Action::"erp.orders.create", resource)
when { context.arguments.amount.greaterThanOrEqual(decimal("1000.0")) };

@id("positive-amounts")
forbid (principal, action == Action::"erp.orders.create", resource)
when { context.arguments.amount.lessThanOrEqual(decimal("0.0")) };
`;

/** The policies after a change: large orders are no longer allowed at all. */
export const frozenPolicy = `
@id("lookups")
permit (principal in Group::"procurement", action == Action::"erp.orders.list", resource);

@id("small-orders")
permit (principal in Group::"procurement", action == Action::"erp.orders.create", resource)
when { context.arguments.amount.lessThan(decimal("1000.0")) };
`;

/** The policies after another change: operations, not finance, approves large orders now. */
export const operationsPolicy = standardPolicy.replace(
  '@id("large-orders")\n@approval("staff")\n@approvers("finance")',
  '@id("large-orders")\n@approval("staff")\n@approvers("operations")',
);

/** The policies with large orders confirmed by the customer as well as approved by finance. */
export const customerPolicy = standardPolicy.replace(
  '@id("large-orders")\n@approval("staff")',
  '@id("large-orders")\n@approval("staff, customer")',
);

/**
 * The policies with large orders asking two finance approvers, open to operations after half an
 * hour, decided only on a sign-in of the last five minutes by a phishing-resistant method.
 */
export const highStakesPolicy = standardPolicy.replace(
  '@id("large-orders")\n@approval("staff")\n@approvers("finance")',
  '@id("large-orders")\n@approval("staff")\n@approvers("finance")\n@quorum("2")\n@escalate("30m, operations")\n@reauth("5m")\n@acr("phr, phrh")',
);

const snapshots = new Map<string, Promise<GatewaySnapshot>>();

/** A snapshot of the bench's configuration (loaded once per variant: Cedar is the slow part). */
export const benchSnapshot = (
  options: {
    readonly policy?: string;
    readonly withCreate?: boolean;
    readonly pendingCalls?: number;
    /** settings.retention as written in the file (absent: the default). */
    readonly retention?: string;
  } = {},
): Promise<GatewaySnapshot> => {
  const policy = options.policy ?? standardPolicy;
  const withCreate = options.withCreate ?? true;
  const pendingCalls = options.pendingCalls ?? 100;
  const { retention } = options;
  const key = JSON.stringify([withCreate, pendingCalls, policy, retention ?? null]);
  const cached = snapshots.get(key);
  if (cached !== undefined) return cached;
  const loading = loadSnapshot({
    text: configText({ withCreate, pendingCalls, retention }),
    file: 'gateway.config.yaml',
    environment: {},
    files: { read: async (path) => (path === 'policies.cedar' ? policy : undefined) },
  }).then((outcome) => {
    if (!outcome.ok) throw new Error(outcome.problems.map(formatProblem).join('\n'));
    return outcome.snapshot;
  });
  snapshots.set(key, loading);
  return loading;
};

export const procurementAgent: AgentIdentity = { id: 'procurement-agent', groups: ['procurement'], customerId: null };
export const financeApprover: Approver = { id: 'farah', name: 'Farah', groups: ['finance'] };
export const secondFinanceApprover: Approver = { id: 'fiona', name: 'Fiona', groups: ['finance'] };
export const operationsApprover: Approver = { id: 'oskar', name: 'Oskar', groups: ['operations'] };
/** In the deciding group, with the id of the agent that asks. */
export const requestingApprover: Approver = { id: procurementAgent.id, name: null, groups: ['finance'] };

/** Arguments as the MCP layer reads them from the request. */
export const argumentsOf = (value: Record<string, unknown>): StrictArguments => {
  const read = readArguments(JSON.stringify(value), []);
  if (read === null) throw new Error('expected JSON arguments');
  return read;
};

/** UUIDv7 ids minted at the clock's time, with a counter: ordered and repeatable. */
const sequentialIds = (clock: ManualClock): IdSource => {
  let counter = 0;
  return {
    next: () => {
      counter += 1;
      const time = clock.now().toString(16).padStart(12, '0');
      const tail = counter.toString(16).padStart(15, '0');
      return `${time.slice(0, 8)}-${time.slice(8)}-7${tail.slice(0, 3)}-8${tail.slice(3, 6)}-${tail.slice(6).padStart(12, '0')}`;
    },
  };
};

/** What the fake system answers a call: an answer now, or never (the gateway stops while it waits). */
export type SystemBehaviour = { readonly kind: 'answer'; readonly result: OutboundResult } | { readonly kind: 'hang' };

export const created201: OutboundResult = {
  kind: 'response',
  status: 201,
  contentType: 'application/json',
  body: Buffer.from('{"id":"PO-1"}'),
};

export interface UseCaseBed {
  readonly store: MemoryExecutionStore;
  readonly clock: ManualClock;
  readonly deps: ApprovalServices & CallToolDeps;
  /** Every request sent to the system, in order. */
  readonly sent: OutboundRequest[];
  readonly started: ApprovalRunStart[];
  readonly signals: { readonly token: string; readonly outcome: ApprovalRunOutcome }[];
  readonly notices: HeldCallNotice[];
  readonly warnings: string[];
  /** How the system answers the next calls (default: 201 with a body). */
  behaviour: SystemBehaviour;
  /** Whether an approval run still waits on a signalled token (false: nothing waits any more). */
  signalAnswer: boolean;
  /** What starting an approval run finds (default: a new run). */
  startAnswer: (input: ApprovalRunStart) => ApprovalRunStarted;
  /** The configuration the gateway holds now. */
  use(snapshot: GatewaySnapshot | null): void;
  /** The stored record of an execution. */
  record(executionId: string): Promise<Execution>;
  /** Requests sent for this execution (the gateway names each by its execution id). */
  sentFor(executionId: string): OutboundRequest[];
}

export const useCaseBed = async (options: { readonly snapshot?: GatewaySnapshot } = {}): Promise<UseCaseBed> => {
  const warnings: string[] = [];
  const log = { info: () => undefined, warn: (message: string) => void warnings.push(message) };
  const store = new MemoryExecutionStore(log);
  const clock = new ManualClock();
  let state: ControlPlaneState = { kind: 'active', snapshot: options.snapshot ?? (await benchSnapshot()) };
  const sent: OutboundRequest[] = [];
  const started: ApprovalRunStart[] = [];
  const signals: { token: string; outcome: ApprovalRunOutcome }[] = [];
  const notices: HeldCallNotice[] = [];
  const bed: UseCaseBed = {
    store,
    clock,
    sent,
    started,
    signals,
    notices,
    warnings,
    behaviour: { kind: 'answer', result: created201 },
    signalAnswer: true,
    startAnswer: () => 'started',
    use: (snapshot) => {
      state =
        snapshot === null ? { kind: 'unavailable', reason: 'not_loaded', snapshot } : { kind: 'active', snapshot };
    },
    record: async (executionId) => {
      const found = await store.get(executionId);
      if (found === undefined) throw new Error(`no execution ${executionId}`);
      return found;
    },
    sentFor: (executionId) => sent.filter((request) => request.headers['x-request-id'] === executionId),
    deps: {
      store,
      clock,
      ids: sequentialIds(clock),
      controlPlane: { current: async () => state },
      sealer: new AesSealer(randomBytes(32)),
      receiptSigner: testReceiptSigner,
      receiptIssuer: () => benchGatewayUrl,
      toolServers: { call: unusedPort('the tool-server client') },
      systems: {
        send: (request) => {
          sent.push(request);
          const behaviour = bed.behaviour;
          // A call that never answers: the gateway stopped while it waited.
          return behaviour.kind === 'hang' ? new Promise<never>(() => undefined) : Promise.resolve(behaviour.result);
        },
      },
      log,
      approvalRuns: {
        start: async (input) => {
          started.push(input);
          return bed.startAnswer(input);
        },
        signal: async (token, outcome) => {
          signals.push({ token, outcome });
          return bed.signalAnswer;
        },
      },
      notifier: { heldCall: async (notice) => void notices.push(notice) },
      consoleUrl: (id) => `http://127.0.0.1/console/executions/${id}`,
      customerUrl: (id) => `http://127.0.0.1/customer/calls/${id}`,
    },
  };
  return bed;
};

/** A lookup of the restricted vendor's orders, held for finance: a read waiting for approval. */
export const holdRestrictedLookup = async (bed: UseCaseBed): Promise<Execution> => {
  const answer = await callTool(bed.deps, procurementAgent, tools.list, argumentsOf({ vendor: 'restricted' }));
  if (answer.status !== 'pending_approval' || answer.execution_id === null) {
    throw new Error(`expected the lookup to be held; it answered ${JSON.stringify(answer)}`);
  }
  return bed.record(answer.execution_id);
};

/** An approval of a held call as the console sends it, with the arguments hash the approver was shown. */
export const approvalOf = (execution: Pick<Execution, 'execution_id' | 'arguments_hash'>): DecisionRequest => ({
  execution_id: execution.execution_id,
  outcome: 'approve',
  arguments_hash: execution.arguments_hash ?? '',
});

/** Finance approves a held call (the approval must hold). */
export const approveHeld = async (bed: UseCaseBed, held: Execution): Promise<void> => {
  const decided = await decide(bed.deps, financeApprover, approvalOf(held));
  if (decided.kind === 'refused') throw new Error(`expected the approval to hold: ${decided.reason}`);
};

/** A large order, held for finance: the pending record as stored. */
export const holdLargeOrder = async (
  bed: UseCaseBed,
  amount = '1500',
  agent: AgentIdentity = procurementAgent,
): Promise<Execution> => {
  const answer = await callTool(bed.deps, agent, tools.create, argumentsOf({ vendor: 'acme', amount }));
  if (answer.status !== 'pending_approval' || answer.execution_id === null) {
    throw new Error(`expected the order to be held; it answered ${JSON.stringify(answer)}`);
  }
  return bed.record(answer.execution_id);
};

/**
 * A direct write the system answers 502 (sent, its outcome not known), through `deps` (the bed's,
 * or a measured copy): the unknown record as stored.
 */
export const unknownWrite = async (bed: UseCaseBed, deps: CallToolDeps = bed.deps): Promise<Execution> => {
  bed.behaviour = {
    kind: 'answer',
    result: { kind: 'response', status: 502, contentType: 'text/plain', body: Buffer.from('upstream down') },
  };
  const answer = await callTool(deps, procurementAgent, tools.create, argumentsOf({ vendor: 'acme', amount: '5' }));
  if (answer.status !== 'unknown' || answer.execution_id === null) {
    throw new Error(`expected the write to end unknown; it answered ${JSON.stringify(answer)}`);
  }
  return bed.record(answer.execution_id);
};
