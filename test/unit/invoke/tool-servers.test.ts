// Which client runs a tool server's call, and when each client is loaded and closed.
import { describe, expect, it } from 'vitest';
import { ToolServers } from '../../../shared/adapters/tool-servers.js';
import type { ResolvedToolServer } from '../../../shared/config/resolved.js';
import type { ToolServerAnswer, ToolServerRequest } from '../../../shared/invoke/tool-server.js';
import { verifies } from '../../support/requirements.js';
import { aCallToolSystem, anMcpSystem } from '../../support/systems.js';

const requestTo = (system: ResolvedToolServer): ToolServerRequest => ({
  system,
  name: 'echo',
  argumentsJson: '{}',
  executionId: '0190a0b0-0000-7000-8000-000000000001',
  traceparent: '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01',
  deadlineMs: 1_000,
  maxResponseBytes: 1_024,
});

const channelSystem: ResolvedToolServer = aCallToolSystem({ key: 'tools', url: 'ws://127.0.0.1:1', timeout: 1_000 });
const mcpSystem: ResolvedToolServer = anMcpSystem({
  url: 'http://127.0.0.1:1/mcp',
  timeout: 1_000,
  max_concurrency: 1,
});

const recording = (answer: ToolServerAnswer) => {
  const calls: string[] = [];
  let closed = 0;
  return {
    calls,
    closed: () => closed,
    client: {
      call: async (request: ToolServerRequest) => {
        calls.push(request.system.key);
        return answer;
      },
      close: async () => {
        closed += 1;
      },
    },
  };
};

describe('the tool-server clients', () => {
  it(
    verifies(
      'systems.tool-server-routing',
      'sends a call-tool system to the channel and an MCP system to the MCP client',
    ),
    async () => {
      const channel = recording({ kind: 'error', code: -32601 });
      const mcp = recording({ kind: 'unreadable' });
      const servers = new ToolServers({ channel: channel.client, mcp: mcp.client });
      expect(await servers.call(requestTo(channelSystem))).toEqual({ kind: 'error', code: -32601 });
      expect(await servers.call(requestTo(mcpSystem))).toEqual({ kind: 'unreadable' });
      expect(channel.calls).toEqual(['tools']);
      expect(mcp.calls).toEqual(['docs']);
      await servers.close();
      expect(mcp.closed()).toBe(1);
    },
  );

  it(
    verifies(
      'systems.tool-server-routing',
      'builds its own clients on first use when none are given, and closing before any call is harmless',
    ),
    async () => {
      const servers = new ToolServers();
      // Nothing loaded: closing costs nothing and loads nothing.
      await servers.close();
      // A call-tool system that cannot be reached loads the channel client, which answers honestly.
      expect(await servers.call(requestTo(channelSystem))).toMatchObject({ kind: 'connection_failed', sent: false });
      expect(await servers.call(requestTo(mcpSystem))).toMatchObject({ kind: 'connection_failed', sent: false });
      await servers.close();
    },
  );
});
