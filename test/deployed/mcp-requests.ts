// JSON-RPC requests to the synthesized stack's /mcp route, as an MCP client of revision 2025-11-25
// sends them one at a time (no session: the deployed endpoint is stateless), and their answers read.
import { expect } from 'vitest';
import type { DeployedStack } from './stack.js';

export const mcpHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

/** A tools/call result's structured content (or the result itself). */
export const structured = (body: string): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(body);
  const result = typeof parsed === 'object' && parsed !== null && 'result' in parsed ? parsed.result : undefined;
  if (typeof result !== 'object' || result === null) throw new Error(`not a JSON-RPC result: ${body}`);
  const content = 'structuredContent' in result ? result.structuredContent : result;
  return typeof content === 'object' && content !== null ? { ...content } : {};
};

/** A sender of JSON-RPC requests to /mcp with the given headers; answers the body of a 200. */
export const mcpSender = (stack: Pick<DeployedStack, 'http'>) => {
  let rpcId = 0;
  return async (method: string, params: Record<string, unknown>, headers: Record<string, string>) => {
    rpcId += 1;
    const answer = await stack.http({
      method: 'POST',
      path: '/mcp',
      headers: { ...mcpHeaders, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: rpcId, method, params }),
    });
    if (answer.functionError !== undefined) throw answer.functionError;
    expect(answer.status, answer.body).toBe(200);
    return answer.body;
  };
};
