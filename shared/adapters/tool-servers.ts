// The tool-server port's adapter: a call-tool system's tools run through the /tool/call-tool
// channel, an MCP system's through the official MCP client. One per process, so connections to
// MCP servers are reused across calls.
import type { ToolServerAnswer, ToolServerClient, ToolServerRequest } from '../invoke/tool-server.js';
import { CallToolChannelClient } from './call-tool-channel-client.js';
import { McpServerClient } from './mcp-server-client.js';

export class ToolServers implements ToolServerClient {
  constructor(
    private readonly channel: ToolServerClient = new CallToolChannelClient(),
    private readonly mcp: ToolServerClient & { close?(): Promise<void> } = new McpServerClient(),
  ) {}

  call(request: ToolServerRequest): Promise<ToolServerAnswer> {
    return request.system.kind === 'call-tool' ? this.channel.call(request) : this.mcp.call(request);
  }

  /** Closes the connections kept to MCP servers. */
  async close(): Promise<void> {
    await this.mcp.close?.();
  }
}
