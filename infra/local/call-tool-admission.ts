// The one admission step of /tool/call-tool, for the WebSocket upgrade and the POST alike: the same
// checks as /mcp, in its order: a Host that is a host name, a Host among the allowed names, a browser
// Origin listed, then the bearer token naming an agent. Each refusal is the answer either transport
// gives (before upgrading, before reading the body).
import type { IncomingMessage } from 'node:http';
import { hostHeaderValidationResponse, originValidationResponse } from '@modelcontextprotocol/server';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import { unauthorizedResponse } from '../../shared/edge/mcp/auth-challenge.js';
import type { CallToolDeps } from '../../shared/use-cases/call-tool.js';
import { identifyCaller } from '../../shared/use-cases/identify-caller.js';
import type { Authorization } from './authorizer.js';
import { isWellFormedHost } from './net.js';

export interface ChannelAdmissionOptions {
  readonly services: CallToolDeps;
  readonly authorize: (authorizationHeader: string | undefined) => Promise<Authorization>;
  /** Host header names accepted (port-agnostic), as /mcp's. */
  readonly allowedHostnames: readonly string[];
  /** Browser Origin hostnames accepted, as /mcp's; requests without an Origin pass. */
  readonly allowedOrigins: readonly string[];
  /** The configured public base URL the 401 challenge names; null: the address the front is bound to. */
  readonly publicUrl: string | null;
}

/** What admitting a request gave: the agent its token names, or the answer refusing it. */
export type ChannelAdmission =
  | { readonly kind: 'admitted'; readonly agent: AgentIdentity }
  | { readonly kind: 'refused'; readonly answer: Response };

export const headerValue = (value: string | string[] | undefined): string | null =>
  value === undefined ? null : Array.isArray(value) ? (value[0] ?? null) : value;

export const jsonAnswer = (status: number, message: string, headers: Record<string, string> = {}): Response =>
  Response.json({ message }, { status, headers });

/** The same refusals as /mcp, in its order: a Host outside the allowed names, a browser Origin not listed. */
const hostOrOriginRefusal = (request: IncomingMessage, options: ChannelAdmissionOptions): Response | undefined => {
  const headers = new Headers();
  for (const name of ['host', 'origin'] as const) {
    const value = headerValue(request.headers[name]);
    if (value !== null) headers.set(name, value);
  }
  // Only the headers are read: the URL is a placeholder.
  const web = new Request('http://front.local/', { headers });
  return (
    hostHeaderValidationResponse(web, [...options.allowedHostnames]) ??
    originValidationResponse(web, [...options.allowedOrigins])
  );
};

/** The agent the request's bearer token names, or the 401 to answer. */
const authenticate = async (
  request: IncomingMessage,
  boundUrl: string,
  options: ChannelAdmissionOptions,
): Promise<ChannelAdmission> => {
  const authorization = await options.authorize(headerValue(request.headers.authorization) ?? undefined);
  const agent =
    authorization.kind === 'authorized' ? await identifyCaller(options.services, authorization.caller) : null;
  if (agent !== null) return { kind: 'admitted', agent };
  const tokenPresented = authorization.kind === 'refused' ? authorization.tokenPresented : true;
  return { kind: 'refused', answer: unauthorizedResponse(options.publicUrl ?? boundUrl, tokenPresented) };
};

/** Admits a request to the channel, whichever transport carries it; `boundUrl` is the front's own address. */
export const admitChannelRequest = async (
  request: IncomingMessage,
  boundUrl: string,
  options: ChannelAdmissionOptions,
): Promise<ChannelAdmission> => {
  if (!isWellFormedHost(request.headers.host)) {
    return {
      kind: 'refused',
      answer: jsonAnswer(400, 'Bad Request: the Host header is not a host name or address (and port)'),
    };
  }
  const refused = hostOrOriginRefusal(request, options);
  if (refused !== undefined) return { kind: 'refused', answer: refused };
  return authenticate(request, boundUrl, options);
};
