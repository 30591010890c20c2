// The get_execution_status tool, listed for every agent whatever the policy or configuration.
import type { Tool } from '@modelcontextprotocol/server';
import { resultObjectJsonSchema } from '../../result.js';

export const statusToolName = 'get_execution_status';

export const statusTool: Tool = {
  name: statusToolName,
  title: 'Get execution status',
  description:
    'Answers the current result object of one of your earlier tool calls, by its execution_id. ' +
    'Use it to follow a call that answered pending_approval: it stays pending_approval until someone decides, ' +
    'then approved while it runs, then its final status (with result when it succeeded). ' +
    'People take minutes or hours to decide: check every 30 to 60 seconds at most, or when the user comes back. ' +
    'Never repeat the original call while it waits; that would be a second request.',
  inputSchema: {
    type: 'object',
    properties: {
      execution_id: {
        type: 'string',
        format: 'uuid',
        description: 'The execution_id from the result object of the earlier call.',
      },
    },
    required: ['execution_id'],
    additionalProperties: false,
  },
  outputSchema: resultObjectJsonSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};
