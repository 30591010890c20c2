// How a result object travels in MCP: as structuredContent and, serialized, as the first text
// block, with isError set exactly for the error statuses.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { isErrorStatus, ResultObject } from '../../result.js';

export const toCallToolResult = (result: ResultObject): CallToolResult => {
  // Checked on the way out: an answer that breaks the contract is a bug, never sent.
  const checked = ResultObject.parse(result);
  return {
    content: [{ type: 'text', text: JSON.stringify(checked) }],
    structuredContent: checked,
    isError: isErrorStatus(checked.status),
  };
};
