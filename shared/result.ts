// The result object every tools/call answers: seven fields, always present, null where they do
// not apply. The zod schema is the source of truth for the type, the tools' outputSchema and the
// check made before an answer leaves the gateway.
import * as z from 'zod';

export const executionStatuses = [
  'succeeded',
  'failed',
  'unknown',
  'denied',
  'pending_approval',
  'approved',
  'rejected',
  'expired',
] as const;

export const ExecutionStatus = z.enum(executionStatuses);
export type ExecutionStatus = z.infer<typeof ExecutionStatus>;

/** Statuses answered with `isError: true`. */
const errorStatuses: ReadonlySet<ExecutionStatus> = new Set(['denied', 'failed', 'unknown', 'rejected', 'expired']);

export const isErrorStatus = (status: ExecutionStatus): boolean => errorStatuses.has(status);

export const InputError = z.object({
  path: z.string().describe('JSON Pointer (RFC 6901) to the offending value; empty for the whole arguments object.'),
  code: z.string(),
  message: z.string(),
});
export type InputError = z.infer<typeof InputError>;

export const ResultObject = z.object({
  status: ExecutionStatus,
  execution_id: z.string().nullable().describe('UUIDv7 of the execution; follow it with get_execution_status.'),
  result: z.unknown().describe("The system's answer when the call succeeded, secrets redacted; otherwise null."),
  code: z.string().nullable(),
  message: z.string().nullable(),
  approval_url: z.string().nullable(),
  input_errors: z.array(InputError).nullable(),
});
export type ResultObject = z.infer<typeof ResultObject>;

/** Builds a result object with every field present; unspecified fields are null. */
export const resultObject = (
  fields: Pick<ResultObject, 'status'> & Partial<Omit<ResultObject, 'status'>>,
): ResultObject => ({
  status: fields.status,
  execution_id: fields.execution_id ?? null,
  result: fields.result ?? null,
  code: fields.code ?? null,
  message: fields.message ?? null,
  approval_url: fields.approval_url ?? null,
  input_errors: fields.input_errors ?? null,
});

/**
 * JSON Schema of the result object, declared as every tool's outputSchema. Marked pure so a bundle
 * that declares no tools (the held-call steps, the reconciler, the call-tool socket, the console)
 * leaves the conversion out rather than run it at every cold start.
 */
export const resultObjectJsonSchema = /* @__PURE__ */ z.toJSONSchema(ResultObject, { target: 'draft-2020-12' });
