// get_execution_status: an agent asks about one of its own calls. Another agent's id and an id
// that does not exist take the same path (one keyed read) and get the same answer.
import type { AgentIdentity } from '../auth/agent.js';
import type { Clock } from '../clock.js';
import { coded, inputError } from '../errors.js';
import { type ExecutionAnswer, executionAnswerOf } from '../executions/execution.js';
import type { ExecutionStore } from '../executions/store.js';
import { isUuid } from '../ids.js';
import { jsonPointer } from '../json-pointer.js';
import { type InputError, type ResultObject, resultObject } from '../result.js';
import { settleOverdue } from './held-calls.js';

/** The refusal of an argument that is not an execution id: its words also explain the entry. */
const notAnId = coded('invalid_arguments', 'execution_id');

const invalid = (input_errors: InputError[]): ExecutionAnswer => ({
  result: resultObject({ status: 'unknown', ...notAnId, input_errors }),
  receipt: null,
});

type StatusDeps = { readonly store: ExecutionStore; readonly clock: Clock };

/** The result object of the agent's call. */
export const getExecutionStatus = async (
  deps: StatusDeps,
  agent: AgentIdentity,
  args: Readonly<Record<string, unknown>>,
): Promise<ResultObject> => (await executionStatusAnswer(deps, agent, args)).result;

/** The result object of the agent's call, and the approval receipt it was sent with (null when none). */
export const executionStatusAnswer = async (
  deps: StatusDeps,
  agent: AgentIdentity,
  args: Readonly<Record<string, unknown>>,
): Promise<ExecutionAnswer> => {
  const { store } = deps;
  const errors: InputError[] = Object.keys(args)
    .filter((key) => key !== 'execution_id')
    .sort()
    .map((key) => inputError(jsonPointer([key]), 'unknown_field'));
  const executionId = args.execution_id;
  if (executionId === undefined) {
    errors.push(inputError('/execution_id', 'missing_field'));
  } else if (typeof executionId !== 'string') {
    errors.push(inputError('/execution_id', 'wrong_type', notAnId.message));
  } else if (!isUuid(executionId.trim())) {
    errors.push(inputError('/execution_id', 'invalid_format', notAnId.message));
  }
  if (errors.length > 0 || typeof executionId !== 'string') return invalid(errors);

  const execution = await store.getOwned({ execution_id: executionId.trim().toLowerCase(), agent_id: agent.id });
  if (execution === undefined) {
    return { result: resultObject({ status: 'unknown', ...coded('not_found') }), receipt: null };
  }
  return executionAnswerOf(await settleOverdue(deps, execution));
};
