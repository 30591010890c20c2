// The gateway's one error vocabulary: every code an agent, an approver or a log line can see is
// defined here, once, with what it means. Nothing else invents a code.
import * as z from 'zod';

/**
 * Codes carried by the result object's `code` field, each with what it means (for people reading
 * the docs and logs) and the message the agent reads (`message`; null where the outcome's status
 * words it, see `outcomeMessage`). Variants of a message live on their code's entry.
 */
export const resultCodes = {
  // denied: refused before anything ran
  invalid_arguments: {
    meaning: 'The arguments do not match the tool input schema; `input_errors` lists each problem.',
    message: "The arguments do not match the tool's input schema.",
    /** get_execution_status: its one argument is not a UUID. */
    execution_id: 'The execution_id must be a UUID.',
  },
  unknown_tool: {
    meaning: 'No tool of that name is listed for this agent (it does not exist, is turned off, or policy hides it).',
    message: 'There is no tool of that name available to this agent.',
  },
  policy_denied: {
    meaning: "The organization's policy does not allow this call.",
    message: "The organization's policy does not allow this call.",
    /** An approved call the policy, changed since, no longer allows as approved. */
    changed:
      "The call was approved, but the organization's policy changed before it ran and no longer allows it as approved; nothing was sent.",
  },
  idempotency_key_reused: {
    meaning: 'The idempotency key was used before by this agent for another tool or other arguments; nothing was sent.',
    message:
      'This idempotency key was already used for a call with another tool or other arguments; nothing was sent. Use a new key for a new call.',
  },
  // denied: one of the agent's own limits (settings.limits); nothing ran, the call may be made again later
  rate_limited: {
    meaning: 'The agent made more requests, or sent more bytes, per second or per day than its limits allow.',
    message: (perSecond: number, burst: number, retryAfterSeconds: number): string =>
      `This agent may make ${perSecond} requests per second (bursts of ${burst}); nothing ran. Try again in ${retryAfterSeconds} s.`,
    /** The request_bytes_per_second or request_bytes_per_day allowance. */
    bytes: (allowed: number, per: 'second' | 'day', retryAfterSeconds: number): string =>
      `This agent may send ${allowed} bytes of requests per ${per}; nothing ran. Try again in ${retryAfterSeconds} s.`,
  },
  concurrency_limited: {
    meaning: 'The agent already has as many requests in progress as its limit allows.',
    message: (concurrent: number): string =>
      `This agent may have ${concurrent} requests in progress at once; nothing ran. Try again when one has answered.`,
  },
  too_many_pending: {
    meaning: 'The agent already has as many calls waiting for approval as its limit allows.',
    message: (pending: number): string =>
      `This agent may have ${pending} calls waiting for approval at once; this one was not held. Try again when one is decided.`,
  },
  // get_execution_status
  not_found: {
    meaning: 'No execution with that id belongs to this agent.',
    message: 'There is no execution with that id for this agent.',
  },
  // outcomes of a system call (failed for reads, unknown for writes)
  timeout: { meaning: 'The system did not answer within its deadline.', message: null },
  connection_failed: { meaning: 'The connection to the system could not be made or was dropped.', message: null },
  redirect_refused: { meaning: 'The system answered with a redirect, which the gateway never follows.', message: null },
  response_too_large: { meaning: "The system's answer exceeded the response-size cap.", message: null },
  unreadable_response: { meaning: "The system's answer could not be read as the operation promised.", message: null },
  tool_error: {
    meaning: "The MCP server's tool reported a failure (isError) without a short machine code of its own.",
    message: null,
  },
  interrupted: {
    meaning: 'The gateway stopped between sending a write and recording its outcome.',
    message: null,
    write: 'The call was sent but the gateway stopped before its answer was recorded; it will not be retried.',
    read: 'The gateway stopped before the answer was recorded; nothing needs undoing, and the call can be tried again.',
  },
  // human steps
  rejected: {
    meaning: 'An approver rejected the call.',
    message: 'An approver rejected the call; nothing ran.',
    /** Followed by the approver's reason. */
    because: 'An approver rejected the call; nothing ran. Their reason: ',
  },
  customer_declined: {
    meaning: 'The customer the agent acts for declined the call on their confirmation page.',
    message: 'The customer declined the call; nothing ran.',
  },
  withdrawn: {
    meaning: 'The agent withdrew the call (MCP `tasks/cancel`) before anyone decided it.',
    message: 'The call was withdrawn before anyone decided it; nothing ran.',
  },
  approval_expired: {
    meaning: 'Nobody decided within the approval time.',
    message: 'Nobody decided within the approval time; nothing ran.',
  },
  // an approved call that could not be sent
  tool_unavailable: {
    meaning: 'The tool was removed or turned off (or the configuration went stale) before the approved call ran.',
    message: 'The call was approved, but the tool was removed or turned off before it ran; nothing was sent.',
    /** A direct call whose tool's system is missing from the same configuration. */
    unconfigured: "The tool's system is not configured now; nothing was sent.",
  },
  arguments_mismatch: {
    meaning: 'The stored arguments no longer match what the approver saw.',
    message: 'The call was approved, but its stored arguments no longer match what the approver saw; nothing was sent.',
  },
} as const;

export type ResultCode = keyof typeof resultCodes;

/**
 * A system's own error code or `http_<status>` may also appear in `code`; they are sanitized
 * to this shape before they leave the gateway.
 */
const systemCodePattern = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/**
 * A system's own error code (sanitized to `systemCodePattern`) or `http_<status>`: the other codes
 * an execution may carry. Branded, so only this schema makes one and no other text can pass for one.
 */
const SystemCode = z.string().regex(systemCodePattern).brand<'SystemCode'>();
export type SystemCode = z.infer<typeof SystemCode>;

/** A system's code as the gateway carries it: lowercased, and only when it has the safe shape. */
export const systemCode = (raw: string): SystemCode | null => {
  const read = SystemCode.safeParse(raw.toLowerCase());
  return read.success ? read.data : null;
};

/** `<prefix>_<number>`: a whole number always has the safe shape (`-` and digits). */
const numberedCode = (prefix: 'http' | 'mcp', value: number): SystemCode =>
  SystemCode.parse(`${prefix}_${Number.isSafeInteger(Math.trunc(value)) ? Math.trunc(value) : 'unknown'}`);

/** The code of a system's answer with this HTTP status and no usable code of its own. */
export const httpStatusCode = (status: number): SystemCode => numberedCode('http', status);

/**
 * A JSON-RPC error relayed from an MCP server, by its number: `mcp_-32601` (no such tool),
 * `mcp_-32602` (the arguments were wrong), or the server's own code. Its message never passes.
 */
export const mcpErrorCode = (code: number): SystemCode => numberedCode('mcp', code);

/** Every code an execution may carry. */
export type ExecutionCode = ResultCode | SystemCode;

/** Whether stored text is a code an execution may carry (records are read back from the store). */
export const isExecutionCode = (value: unknown): value is ExecutionCode =>
  typeof value === 'string' && (Object.hasOwn(resultCodes, value) || systemCodePattern.test(value));

/** Codes a call is refused with before anything runs (status denied). */
export type RefusalCode =
  | 'invalid_arguments'
  | 'unknown_tool'
  | 'policy_denied'
  | 'idempotency_key_reused'
  | 'rate_limited'
  | 'concurrency_limited'
  | 'too_many_pending';

interface Refusal {
  readonly status: 'denied';
  readonly code: RefusalCode;
  readonly message: string;
}

type Entry<C extends ResultCode> = (typeof resultCodes)[C];

/** The names of a code's fixed words: `message` and the variants written on its entry. */
type Wording<C extends ResultCode> = {
  [K in keyof Entry<C>]: K extends 'meaning' ? never : Entry<C>[K] extends string ? K : never;
}[keyof Entry<C>];

/** Codes whose own message is fixed text (not worded by an outcome, not naming a limit). */
type FixedMessageCode = { [C in ResultCode]: Entry<C>['message'] extends string ? C : never }[ResultCode];

/** A code side by side with its words, as a record's patch or a result object carries them. */
export interface Coded<C extends ResultCode = ResultCode> {
  readonly code: C;
  readonly message: string;
}

/**
 * A code with its words taken from its entry: its message, or a variant named on the entry
 * (`coded('interrupted', 'write')`). The one way a code and its message are put together.
 */
export function coded<C extends FixedMessageCode>(code: C): Coded<C>;
export function coded<C extends ResultCode>(code: C, wording: Wording<C>): Coded<C>;
export function coded<C extends ResultCode>(code: C, wording = 'message'): Coded<C> {
  const entry: Readonly<Record<string, unknown>> = resultCodes[code];
  const words = entry[wording];
  return { code, message: typeof words === 'string' ? words : '' };
}

/** An approver's rejection: their reason, when they gave one, follows the code's message. */
export const rejectedBecause = (note: string | null): Coded<'rejected'> =>
  note === null ? coded('rejected') : { code: 'rejected', message: `${resultCodes.rejected.because}${note}` };

/** A refusal of one code. */
export type RefusalOf<C extends RefusalCode> = Refusal & { readonly code: C };

/** A refusal with its code's own message. */
export const refusal = <C extends RefusalCode & FixedMessageCode>(code: C): RefusalOf<C> => ({
  status: 'denied',
  ...coded(code),
});

/** The refusals of an agent's own limits (settings.limits), each naming the limit it reached. */
export const limitRefusals = {
  requests: (perSecond: number, burst: number, retryAfterSeconds: number): RefusalOf<'rate_limited'> => ({
    status: 'denied',
    code: 'rate_limited',
    message: resultCodes.rate_limited.message(perSecond, burst, retryAfterSeconds),
  }),
  bytes: (allowed: number, per: 'second' | 'day', retryAfterSeconds: number): RefusalOf<'rate_limited'> => ({
    status: 'denied',
    code: 'rate_limited',
    message: resultCodes.rate_limited.bytes(allowed, per, retryAfterSeconds),
  }),
  concurrent: (concurrent: number): RefusalOf<'concurrency_limited'> => ({
    status: 'denied',
    code: 'concurrency_limited',
    message: resultCodes.concurrency_limited.message(concurrent),
  }),
  pending: (pending: number): RefusalOf<'too_many_pending'> => ({
    status: 'denied',
    code: 'too_many_pending',
    message: resultCodes.too_many_pending.message(pending),
  }),
} as const;

/** Codes of the entries of `input_errors`, each with the message the agent reads. */
export const inputErrorCodes = {
  unknown_field: 'This field is not in the tool input schema.',
  missing_field: 'This required field is missing.',
  wrong_type: 'This value has the wrong type.',
  not_allowed_value: 'This value is not one of the allowed values.',
  pattern_mismatch: 'This value does not match the required pattern.',
  too_short: 'This value is too short.',
  too_long: 'This value is too long.',
  out_of_range: 'This number is outside the allowed range.',
  invalid_format: 'This value is not in the required format.',
  schema_violation: 'This value does not satisfy the tool input schema.',
  invalid_decimal: 'Expected a decimal number such as 1500 or 1500.25.',
  mixed_script: 'An identifier may use Latin or Arabic letters, not both.',
  unsupported_script: 'An identifier may use letters of the Latin or the Arabic script only.',
  disallowed_character:
    'An identifier may hold only Latin or Arabic letters, ASCII digits and - _ . / (no spaces, other symbols, or invisible characters).',
  arguments_too_large: 'The arguments exceed 64 KB once canonicalized.',
  nesting_too_deep: 'The arguments are nested more than 32 levels deep.',
  duplicate_key: 'This object has the same key more than once.',
  unsafe_integer:
    'This number is beyond ±(2^53−1) and cannot be kept exact here (whole numbers written in JSON are kept digit for digit).',
  non_finite_number: 'Numbers must be finite.',
  forbidden_key: 'Keys named __proto__, constructor or prototype are refused.',
  lone_surrogate: 'This string holds a lone UTF-16 surrogate.',
  not_an_object: 'The arguments must be a JSON object.',
  too_many_values: 'The arguments hold more than 10 000 values (objects, arrays and scalars counted).',
  too_many_items: 'This array holds more than 1 000 items.',
  more_errors: 'More problems were found than are listed.',
} as const;

export type InputErrorCode = keyof typeof inputErrorCodes;

/** One entry of `input_errors`: where, which code, and its words (the code's own unless detailed). */
export const inputError = (
  path: string,
  code: InputErrorCode,
  message: string = inputErrorCodes[code],
): { readonly path: string; readonly code: InputErrorCode; readonly message: string } => ({ path, code, message });

/** Wording of the waits and of an approval, which are statuses, not codes. */
export const statusMessages = {
  waiting_for_staff: 'Waiting for approval by the organization. Check with get_execution_status; do not call again.',
  waiting_for_customer:
    'Waiting for the customer: ask them to open approval_url and confirm. Then check with the status tool.',
  approved: 'Approved; the call is being run. Check again with get_execution_status.',
} as const;

/** How a system call that did not succeed is explained to the agent (by its status, not its code). */
const outcomeMessages = {
  unknown:
    'The call was sent but no reliable answer came back; the system may or may not have done it. It will not be retried.',
  refused: 'The system refused the call.',
  unusable: 'The system gave no usable answer; nothing needs undoing, and the call can be tried again.',
} as const;

/**
 * How an unknown outcome an operator settled is explained to the agent: the gateway's words only.
 * The operator's reason is for the audit (it may name the system's internals), never for the agent.
 */
export const settledMessages = {
  succeeded:
    'The outcome was unknown; an operator checked the system and settled it: the system did it. No answer of the system is available.',
  failed:
    'The outcome was unknown; an operator checked the system and settled it: the system did not do it. Nothing was retried.',
} as const;

/** The message of a system call's outcome: none on success; a refusal for a 4xx answer or a tool's refusal. */
export const outcomeMessage = (outcome: {
  readonly status: 'succeeded' | 'failed' | 'unknown';
  readonly httpStatus: number | null;
  /** The system answered that it would not do it (an MCP tool's isError, a JSON-RPC error). */
  readonly refused?: boolean;
}): string | null => {
  if (outcome.status === 'succeeded') return null;
  if (outcome.status === 'unknown') return outcomeMessages.unknown;
  return outcome.refused === true ||
    (outcome.httpStatus !== null && outcome.httpStatus >= 400 && outcome.httpStatus < 500)
    ? outcomeMessages.refused
    : outcomeMessages.unusable;
};

/** What an agent reads when tools/call fails inside the gateway: nothing of the fault itself. */
export const toolCallFaultMessage =
  'The gateway met an internal fault while handling this call, and its outcome is not known here. Check before repeating a write.';

/** What a caught failure says, for a log line or a message: its message, or the thrown value as text. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** A crash for a terminal: where it was thrown as well as what it says. */
export const stackText = (error: unknown): string =>
  error instanceof Error ? (error.stack ?? error.message) : String(error);

/** A fault for the log: its kind and message, bounded (a fault's text may be long or carry input). */
export const faultText = (error: unknown): string =>
  (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 1000);

/**
 * The execution store could not be read or written just now (a fault on its side, throttling, a
 * failing or full disk under the local store): nothing was recorded by that operation, and it may
 * work again shortly. Thrown by store adapters; a call that meets it before anything was sent
 * answers `storeUnavailableMessage`.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/** What an agent reads when the store could not record a new call: a temporary refusal. */
export const storeUnavailableMessage =
  'The gateway cannot record calls just now (its store is failing), so nothing was sent. Try again shortly.';

/** The words of a failed tools/call: temporary when the store refused before anything was sent. */
export const toolCallFaultMessageOf = (error: unknown): string =>
  error instanceof StoreUnavailableError ? storeUnavailableMessage : toolCallFaultMessage;
