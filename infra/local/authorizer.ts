// The local stand-in for the agent authorizer: a bearer token from the configuration names its
// `agents:` entry, and that caller goes on as the deployed authorizer's does, so the handlers
// identify the agent the same way locally and in AWS (from the caller, with the configuration).
import { hash, timingSafeEqual } from 'node:crypto';
import type { Caller } from '../../shared/auth/agent.js';
import type { ResolvedAgent } from '../../shared/config/resolved.js';
import { bearerToken } from '../../shared/edge/tool-call/bearer.js';

export type Authorization =
  | { readonly kind: 'authorized'; readonly caller: Caller }
  | { readonly kind: 'refused'; readonly tokenPresented: boolean };

// In one shot: no Hash object built, fed and finished for each request's token.
const digest = (token: string): Buffer => hash('sha256', token, 'buffer');

const callerFor = (agent: ResolvedAgent): Caller => ({ kind: 'listed', agentId: agent.id });

export interface LocalAuthorizerOptions {
  readonly agents: () => readonly ResolvedAgent[];
  /** Agent that requests without any Authorization header act as (local conformance runs only). */
  readonly anonymousAgent: string | null;
}

export const createLocalAuthorizer = (options: LocalAuthorizerOptions) => {
  // The configured tokens' digests, computed once per configuration (its agents list).
  let digested: { readonly agents: readonly ResolvedAgent[]; readonly digests: readonly Buffer[] } | null = null;
  const tokenDigests = (): { readonly agents: readonly ResolvedAgent[]; readonly digests: readonly Buffer[] } => {
    const agents = options.agents();
    // An agent listed only by subject has no local token: its slot holds nothing a token can match.
    if (digested?.agents !== agents) {
      digested = {
        agents,
        digests: agents.map((agent) => (agent.token === null ? Buffer.alloc(0) : digest(agent.token))),
      };
    }
    return digested;
  };
  const agentForToken = (token: string): ResolvedAgent | undefined => {
    const presented = digest(token);
    const { agents, digests } = tokenDigests();
    // Compare every token in constant time, so timing does not tell how close a guess was.
    let match: ResolvedAgent | undefined;
    agents.forEach((agent, index) => {
      const known = digests[index];
      if (known !== undefined && known.length === presented.length && timingSafeEqual(known, presented))
        match ??= agent;
    });
    return match;
  };

  return async (authorizationHeader: string | undefined): Promise<Authorization> => {
    if (authorizationHeader === undefined && options.anonymousAgent !== null) {
      const agent = options.agents().find((candidate) => candidate.id === options.anonymousAgent);
      if (agent !== undefined) return { kind: 'authorized', caller: callerFor(agent) };
    }
    // The credential read as every front reads it (the deployed authorizer, gRPC): only a bearer
    // token counts as presented; another scheme, or none, is asked for one.
    const token = bearerToken(authorizationHeader);
    if (token === null) return { kind: 'refused', tokenPresented: false };
    const agent = agentForToken(token);
    return agent === undefined
      ? { kind: 'refused', tokenPresented: true }
      : { kind: 'authorized', caller: callerFor(agent) };
  };
};
