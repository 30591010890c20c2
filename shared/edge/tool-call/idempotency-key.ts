// The agent's idempotency key, read once for every transport (MCP's two paths, gRPC, the
// /tool/call-tool channel) from a tools/call's params: `_meta["approval-gateway/idempotency-key"]`.
// A malformed key is an input error naming that member, refused with the call's other input errors.
import { inputError } from '../../errors.js';
import { idempotencyKeyMember, idempotencyKeyProblem } from '../../executions/call-keys.js';
import { jsonPointer } from '../../json-pointer.js';
import { isRecord } from '../../objects.js';
import type { CallRequestContext } from '../../use-cases/call-tool.js';

/** Where a malformed key is, as its input error says: the member of the params' `_meta`. */
const idempotencyKeyPath = jsonPointer(['_meta', idempotencyKeyMember]);

/** The key a tools/call's params carry (null without one), or why it is not one. */
export const idempotencyKeyOf = (
  params: unknown,
): Required<Pick<CallRequestContext, 'idempotencyKey' | 'idempotencyKeyError'>> => {
  const meta = isRecord(params) ? params._meta : undefined;
  if (!isRecord(meta) || !Object.hasOwn(meta, idempotencyKeyMember)) {
    return { idempotencyKey: null, idempotencyKeyError: null };
  }
  const value = meta[idempotencyKeyMember];
  const problem = idempotencyKeyProblem(value);
  if (problem !== null) {
    return { idempotencyKey: null, idempotencyKeyError: inputError(idempotencyKeyPath, problem.code, problem.message) };
  }
  return { idempotencyKey: typeof value === 'string' ? value : null, idempotencyKeyError: null };
};
