// PLACEHOLDER (replaced by the MCP client adapter): calls a tool on a remote MCP server.
import type { ToolServerAnswer, ToolServerClient, ToolServerRequest } from '../invoke/tool-server.js';

export class McpServerClient implements ToolServerClient {
  async call(_request: ToolServerRequest): Promise<ToolServerAnswer> {
    return { kind: 'connection_failed', sent: false };
  }

  async close(): Promise<void> {}
}
