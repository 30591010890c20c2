// PLACEHOLDER (replaced by the channel client): calls a tool through a /tool/call-tool proxy.
import type { ToolServerAnswer, ToolServerClient, ToolServerRequest } from '../invoke/tool-server.js';

export class CallToolChannelClient implements ToolServerClient {
  async call(_request: ToolServerRequest): Promise<ToolServerAnswer> {
    return { kind: 'connection_failed', sent: false };
  }
}
