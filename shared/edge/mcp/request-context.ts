// What the transport learned about one MCP request before the SDK parsed it: who is calling, and
// the tool call's arguments read strictly from the request's own text.
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { StrictArguments } from '../../arguments/strict-json.js';
import type { AgentIdentity } from '../../auth/agent.js';
import type { LimitRefusal } from '../../limits/request-gate.js';

export class McpRequestContext {
  constructor(
    readonly agent: AgentIdentity,
    /** Arguments of a tools/call, read from the raw body; null for other requests. */
    readonly toolArguments: StrictArguments | null,
    /** The caller's W3C traceparent header, if any. */
    readonly traceparent: string | null = null,
    /** Set when one of the agent's limits refused this tools/call: it is answered without running. */
    readonly refusal: LimitRefusal | null = null,
    /** 2025-11-25: the client declared URL-mode elicitation at initialize (its session id says so). */
    readonly urlElicitation2025: boolean = false,
  ) {}

  withUrlElicitation2025(declared: boolean): McpRequestContext {
    return new McpRequestContext(this.agent, this.toolArguments, this.traceparent, this.refusal, declared);
  }

  toAuthInfo(): AuthInfo {
    return { token: '', clientId: this.agent.id, scopes: [], extra: { context: this } };
  }
}

export const requestContextOf = (authInfo: AuthInfo | undefined): McpRequestContext => {
  const context = authInfo?.extra?.context;
  if (!(context instanceof McpRequestContext)) throw new Error('The MCP request carries no gateway context.');
  return context;
};
