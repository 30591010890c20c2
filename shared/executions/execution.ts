// An execution is the gateway's record of one tools/call: who asked, what for, what was decided
// and how it ended. Every answer about a call is derived from this record.
import * as z from 'zod';
import { type ExecutionCode, isExecutionCode } from '../errors.js';
import { ExecutionStatus, InputError, type ResultObject, resultObject } from '../result.js';
import { parseStringifiable } from '../wire/exact-json.js';

/** Statuses of calls still waiting for a decision or for their outcome. */
export const openStatuses: ReadonlySet<ExecutionStatus> = new Set(['pending_approval', 'approved']);

/** Statuses after which nothing changes any more. */
export const terminalStatuses: ReadonlySet<ExecutionStatus> = new Set([
  'succeeded',
  'failed',
  'unknown',
  'denied',
  'rejected',
  'expired',
]);

/** Which status may follow which: the lifecycle, checked by every write's plan (./write-plan.ts). */
export const allowedTransitions: Readonly<Record<ExecutionStatus, readonly ExecutionStatus[]>> = {
  pending_approval: ['approved', 'rejected', 'expired'],
  // denied: the policy as it is when an approved call runs no longer allows it (nothing was sent).
  approved: ['succeeded', 'failed', 'unknown', 'denied'],
  succeeded: [],
  failed: [],
  unknown: [],
  denied: [],
  rejected: [],
  expired: [],
};

/** What an operator may settle an unknown outcome as: what they found in the system. */
export const SettledOutcome = z.enum(['succeeded', 'failed']);
export type SettledOutcome = z.infer<typeof SettledOutcome>;

/**
 * The one move out of a final status: an `unknown` outcome settled by an operator as the outcome
 * they found in the system, once (./write-plan.ts plans it; no other write may make it).
 */
export const settlementTransitions: Readonly<Partial<Record<ExecutionStatus, readonly SettledOutcome[]>>> = {
  unknown: SettledOutcome.options,
};

/** Longest reason an operator may give when settling (characters). */
export const maxSettlementReasonLength = 500;

/**
 * Who settled an unknown outcome, when, why and as what. `by` is the operator's identity (the OS
 * user locally, the AWS caller's ARN against a deployed table); `reason` is their words for the
 * audit, never shown to the agent; `unknown_code` the code the call ended unknown with.
 */
export const Settlement = z.object({
  outcome: SettledOutcome,
  by: z.string().min(1).max(2048),
  at: z.iso.datetime(),
  reason: z
    .string()
    .min(1, 'the reason is required')
    .max(maxSettlementReasonLength, `the reason is at most ${maxSettlementReasonLength} characters`)
    .refine((text) => !/\p{Cc}/u.test(text), 'the reason may not hold control characters (line breaks, tabs, escapes)'),
  unknown_code: z.string().nullable(),
});
export type Settlement = z.infer<typeof Settlement>;

/** A move the lifecycle does not allow was asked of a store (./write-plan.ts says why): nothing was written. */
export class IllegalTransitionError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'IllegalTransitionError';
  }
}

const StatusChange = z.object({ status: ExecutionStatus, at: z.iso.datetime() });

/**
 * One staff approval of a held call: who, when, as a member of which group (the policy's, or the
 * escalation's), and the sign-in it was given under (when it began, its `acr`; null when unknown).
 */
export const StaffApproval = z.object({
  by: z.string().min(1),
  at: z.iso.datetime(),
  group: z.string(),
  signed_in_at: z.iso.datetime().nullable().default(null),
  acr: z.string().nullable().default(null),
});
export type StaffApproval = z.infer<typeof StaffApproval>;

/** A policy named in a decision: its name and where it is written (never its text). */
const PolicyReference = z.object({ name: z.string(), file: z.string(), line: z.number().int() });

/** What policy decided for the call, kept on the execution for audit and for the human step. */
export const DecisionRecord = z.object({
  effect: z.enum(['allow', 'deny']),
  /** Why a call was refused: no permit, a forbid, arguments Cedar cannot hold, an evaluation error. */
  reason: z.enum(['no_permit', 'forbidden', 'not_representable', 'evaluation_error']).nullable(),
  determining: z.array(PolicyReference),
  /**
   * The people who must agree before it runs; null when it runs at once. Records written before
   * quorums, escalation and fresh sign-ins hold none of them: one approver, no escalation.
   */
  step: z
    .object({
      staff: z.string().nullable(),
      customer: z.boolean(),
      quorum: z.number().int().min(1).default(1),
      escalation: z.object({ after_ms: z.number().int().positive(), group: z.string() }).nullable().default(null),
      reauth_ms: z.number().int().positive().nullable().default(null),
      acr: z.array(z.string()).readonly().nullable().default(null),
    })
    .nullable(),
  /** The configuration version that decided. */
  config_version: z.string(),
});
export type DecisionRecord = z.infer<typeof DecisionRecord>;

/**
 * Where a call came from when a transport other than HTTP MCP carried it: the gRPC stream's
 * Connect fields and its request-UUID header (shared/edge/grpc/), kept for correlation and audit.
 */
export const ExecutionOrigin = z.object({
  transport: z.literal('grpc'),
  server_id: z.string(),
  request_id: z.string().nullable(),
  request_uuid: z.string().nullable(),
  trace_id: z.string().nullable(),
  span_id: z.string().nullable(),
  tenant: z
    .object({
      bundle_id: z.string().nullable(),
      feature_id: z.string().nullable(),
      client_info: z.string().nullable(),
      automated_test_device_group: z.string().nullable(),
    })
    .nullable(),
  server_cloudos_version: z.string().nullable(),
});
export type ExecutionOrigin = z.infer<typeof ExecutionOrigin>;

export const Execution = z.object({
  execution_id: z.uuid(),
  agent_id: z.string().min(1),
  customer_id: z.string().nullable(),
  /**
   * The agent's groups when it asked: an approved call is checked against the policy again before
   * it runs, as that identity (null on records written before groups were kept: no groups then).
   */
  agent_groups: z.array(z.string()).nullable().default(null),
  tool: z.string(),
  /** Whether the tool reads or writes (null when no tool was found): a read never ends unknown. */
  access: z.enum(['read', 'write']).nullable().default(null),
  status: ExecutionStatus,
  /** Canonical arguments as the canonical serialization; null when they were refused unparsed. */
  arguments_json: z.string().nullable(),
  /** A result code (shared/errors.ts) or a system's sanitized code; null while nothing needs saying. */
  code: z.custom<ExecutionCode>(isExecutionCode, 'expected a result code or a system code').nullable(),
  message: z.string().nullable(),
  /** The system's answer (redacted) as JSON text, when the call succeeded. */
  result_json: z.string().nullable(),
  approval_url: z.string().nullable(),
  input_errors: z.array(InputError).nullable(),
  /** SHA-256 of the canonical arguments (what an approver's decision must match). */
  arguments_hash: z.string().nullable().default(null),
  decision: DecisionRecord.nullable().default(null),
  /** The full canonical arguments, encrypted, when they hold a secret (opened only to send). */
  sealed_arguments: z.string().nullable().default(null),
  /**
   * The JSON Pointers of the values hidden in arguments_json, so a hidden secret is told from a
   * value that only reads "[REDACTED]" (null on records written before they were kept).
   */
  secret_pointers: z.array(z.string()).nullable().default(null),
  /** When a write was claimed for sending, and by when its outcome must be known. */
  claimed_at: z.iso.datetime().nullable().default(null),
  deadline_at: z.iso.datetime().nullable().default(null),
  /**
   * The approval receipt an approved call was sent with (a compact JWS), kept with its claim; null
   * for a call that ran at once (no one approved it) and on records written before receipts.
   */
  receipt: z.string().nullable().default(null),
  /** The system's HTTP status and how long the call took. */
  http_status: z.number().int().nullable().default(null),
  latency_ms: z.number().int().nullable().default(null),
  trace_id: z.string().nullable().default(null),
  /** For a held call: when its approval time runs out. */
  expires_at: z.iso.datetime().nullable().default(null),
  /** The approval run's task token while it waits for the decision (never shown to anyone). */
  task_token: z.string().nullable().default(null),
  /**
   * The staff approvals given so far, in order: a quorum's count toward it (the call is approved
   * with the last one); empty on records written before approvals were kept one by one.
   */
  approvals: z.array(StaffApproval).default([]),
  /**
   * The group the staff member who decided acted as (the policy's, or the escalation group), for
   * an approval or a rejection; null for the customer's decision and on records written before.
   */
  decided_as: z.string().nullable().default(null),
  /** When the call was escalated to the policy's escalation group (once), or null. */
  escalated_at: z.iso.datetime().nullable().default(null),
  /** Who decided, when, and the note they left for the agent (rejections). */
  decided_by: z.string().nullable().default(null),
  decided_at: z.iso.datetime().nullable().default(null),
  decision_note: z.string().nullable().default(null),
  /**
   * When the customer confirmed a call that also waits for staff (it stays pending_approval until
   * staff decide); null while the customer's step is open or when the policy asked for none.
   */
  customer_confirmed_at: z.iso.datetime().nullable().default(null),
  /** When approvers were notified (once per held call). */
  notified_at: z.iso.datetime().nullable().default(null),
  /**
   * How often recovery started the call's approval run again under a new name, after a run ended
   * before it registered (a run's name is never reused: see shared/approvals/approval-runs.ts).
   */
  approval_run_restarts: z.number().int().min(0).default(0),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  /** Every status the execution took, with when. */
  history: z.array(StatusChange).min(1),
  /** The stream a gRPC call came through (null for HTTP MCP and on records written before). */
  origin: ExecutionOrigin.nullable().default(null),
  /**
   * How long the record is kept once final, in seconds: settings.retention when the call was made
   * (null on records written before it was kept: the default applies).
   */
  retention_s: z.number().int().positive().nullable().default(null),
  /**
   * When the table may delete the record (epoch seconds): set by the store on the write that makes
   * it final, never while it waits or runs (see ./retention.ts).
   */
  retain_until: z.number().int().nullable().default(null),
  /** How an operator settled the call's unknown outcome (null unless they did). */
  settlement: Settlement.nullable().default(null),
});
export type Execution = z.infer<typeof Execution>;

/** The fields every new execution names; the rest start empty. */
export type NewExecutionFields = Pick<
  Execution,
  'execution_id' | 'agent_id' | 'customer_id' | 'tool' | 'status' | 'created_at'
> &
  Partial<Omit<Execution, 'execution_id' | 'agent_id' | 'customer_id' | 'tool' | 'status' | 'created_at'>>;

/** A new execution record: unset fields null, its first status in its history. */
export const newExecutionRecord = (fields: NewExecutionFields): Execution => ({
  agent_groups: null,
  access: null,
  arguments_json: null,
  code: null,
  message: null,
  result_json: null,
  approval_url: null,
  input_errors: null,
  arguments_hash: null,
  decision: null,
  sealed_arguments: null,
  secret_pointers: null,
  customer_confirmed_at: null,
  claimed_at: null,
  deadline_at: null,
  receipt: null,
  http_status: null,
  latency_ms: null,
  trace_id: null,
  expires_at: null,
  task_token: null,
  decided_by: null,
  decided_at: null,
  decision_note: null,
  approvals: [],
  decided_as: null,
  escalated_at: null,
  notified_at: null,
  approval_run_restarts: 0,
  origin: null,
  retention_s: null,
  retain_until: null,
  settlement: null,
  updated_at: fields.created_at,
  history: [{ status: fields.status, at: fields.created_at }],
  ...fields,
});

/** What an agent is answered about its execution: its result object, and the receipt its call was sent with. */
export interface ExecutionAnswer {
  readonly result: ResultObject;
  /** The approval receipt (a compact JWS), carried beside the result object (MCP's _meta); null when none. */
  readonly receipt: string | null;
}

export const executionAnswerOf = (execution: Execution): ExecutionAnswer => ({
  result: toResultObject(execution),
  receipt: execution.receipt,
});

/** What an agent may learn about its own execution. */
export const toResultObject = (execution: Execution): ResultObject =>
  resultObject({
    status: execution.status,
    execution_id: execution.execution_id,
    // Read exactly and handed on so any JSON writer sends an integer beyond 2^53 digit for digit.
    result: execution.result_json === null ? null : parseStringifiable(execution.result_json),
    code: execution.code,
    message: execution.message,
    approval_url: execution.approval_url,
    input_errors: execution.input_errors,
  });
