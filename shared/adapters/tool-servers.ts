// The tool-server port's adapter: a call-tool system's tools run through the /tool/call-tool
// channel, an MCP system's through the official MCP client. One per process, so connections to
// MCP servers are reused across calls. Each client is loaded on its first call, so a function
// whose configuration has no such system never initializes the WebSocket or MCP client code.
import type { ToolServerAnswer, ToolServerClient, ToolServerRequest } from '../invoke/tool-server.js';

type ClosableClient = ToolServerClient & { close?(): Promise<void> };

export class ToolServers implements ToolServerClient {
  private channel: Promise<ToolServerClient> | null;
  private mcp: Promise<ClosableClient> | null;

  /** Clients given here are used as they are (the local runtime shares its MCP client with discovery). */
  constructor(given: { readonly channel?: ToolServerClient; readonly mcp?: ClosableClient } = {}) {
    this.channel = given.channel === undefined ? null : Promise.resolve(given.channel);
    this.mcp = given.mcp === undefined ? null : Promise.resolve(given.mcp);
  }

  async call(request: ToolServerRequest): Promise<ToolServerAnswer> {
    if (request.system.kind === 'call-tool') {
      this.channel ??= import('./call-tool-channel-client.js').then((module) => new module.CallToolChannelClient());
      return (await this.channel).call(request);
    }
    this.mcp ??= import('./mcp-server-client.js').then((module) => new module.McpServerClient());
    return (await this.mcp).call(request);
  }

  /** Closes the connections kept to MCP servers. */
  async close(): Promise<void> {
    if (this.mcp !== null) await (await this.mcp).close?.();
  }
}
