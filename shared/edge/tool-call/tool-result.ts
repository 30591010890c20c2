// How a result object travels in MCP: as structuredContent and, serialized, as the first text
// block, with isError set exactly for the error statuses; an approved call's receipt in _meta.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { type Execution, executionAnswerOf } from '../../executions/execution.js';
import { receiptMetaKey } from '../../receipts/claims.js';
import { isErrorStatus, ResultObject } from '../../result.js';

export const toCallToolResult = (result: ResultObject, receipt: string | null = null): CallToolResult => {
  // Checked on the way out: an answer that breaks the contract is a bug, never sent.
  const checked = ResultObject.parse(result);
  return {
    content: [{ type: 'text', text: JSON.stringify(checked) }],
    structuredContent: checked,
    isError: isErrorStatus(checked.status),
    // Beside the seven fields, never among them: the proof the system received that people approved.
    ...(receipt === null ? {} : { _meta: { [receiptMetaKey]: receipt } }),
  };
};

/** An execution's answer as it travels in MCP. */
export const executionCallToolResult = (execution: Execution): CallToolResult => {
  const answer = executionAnswerOf(execution);
  return toCallToolResult(answer.result, answer.receipt);
};
