// Who is calling: the agent identity every use-case receives. A verified token names a subject;
// the configuration's `agents:` entry listing that subject decides the agent's id, groups and
// customer, and the token's own claims speak only for a subject no entry lists (docs/adr/0002-identity-the-token-names-a-subject-the-configuration-names-t.md).

export interface AgentIdentity {
  readonly id: string;
  readonly groups: readonly string[];
  /** The customer this agent acts for, when it is an outside agent acting for one. */
  readonly customerId: string | null;
}

/**
 * Which claims of a verified token are read: the subject always; groups and customer only when
 * the deployment names such claims (null reads none, as with the stack's Cognito pool).
 */
export interface ClaimNames {
  readonly agent: string;
  readonly groups: string | null;
  readonly customer: string | null;
}

/** Who the edge let in. */
export type Caller =
  /** A verified token: its subject, what its claims say (when read), and when it expires (epoch seconds). */
  | {
      readonly kind: 'token';
      readonly subject: string;
      readonly groups: readonly string[];
      readonly customerId: string | null;
      readonly expiresAt: number | null;
    }
  /** A local bearer token, matched to its `agents:` entry by the local front. */
  | { readonly kind: 'listed'; readonly agentId: string };

/** An `agents:` entry, as identification reads it. */
export interface ListedAgent {
  readonly id: string;
  readonly subject: string | null;
  readonly groups: readonly string[];
  readonly customer: string | null;
}

/**
 * API Gateway hands JWT claims over as strings; a list claim arrives as "[a b c]". Both that
 * form and a real array (or a comma-separated string) are accepted.
 */
export const listClaim = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  if (typeof value !== 'string') return [];
  const inner = value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value;
  return inner
    .split(/[\s,]+/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
};

export const textClaim = (value: unknown): string | null =>
  typeof value === 'string' && value.trim().length > 0 ? value.trim() : null;

const groupSet = (groups: readonly string[]): string[] => [...new Set(groups)].sort();

/**
 * The caller a verified token's claims name, or null when the subject claim is missing, or when a
 * customer claim that is read is there but is not text: read as no customer, an agent acting for
 * one would act as an inside agent.
 */
export const callerFromClaims = (claims: Readonly<Record<string, unknown>>, names: ClaimNames): Caller | null => {
  const subject = textClaim(claims[names.agent]);
  if (subject === null) return null;
  const customer = names.customer === null ? undefined : claims[names.customer];
  if (customer !== undefined && customer !== null && typeof customer !== 'string') return null;
  return {
    kind: 'token',
    subject,
    groups: names.groups === null ? [] : groupSet(listClaim(claims[names.groups])),
    customerId: textClaim(customer),
    expiresAt: typeof claims.exp === 'number' ? claims.exp : null,
  };
};

/** The agent a listed entry is (its groups once each, sorted), however its caller was matched to it. */
export const listedIdentity = (agent: ListedAgent): AgentIdentity => ({
  id: agent.id,
  groups: groupSet(agent.groups),
  customerId: agent.customer,
});

/**
 * The agent a caller is, given the configured agents, or null to refuse it: a token past its
 * expiry (an authorizer's cached answer may outlive it), a local token whose entry is gone, or an
 * unlisted subject that spells a listed agent's id (it would read that agent's calls and share
 * its limits). A listed subject is its entry, whatever the token claims; any other subject is an
 * agent of that id with what its claims say.
 */
export const identify = (caller: Caller, agents: readonly ListedAgent[], nowMs: number): AgentIdentity | null => {
  if (caller.kind === 'listed') {
    const listed = agents.find((agent) => agent.id === caller.agentId);
    return listed === undefined ? null : listedIdentity(listed);
  }
  if (caller.expiresAt !== null && caller.expiresAt * 1000 <= nowMs) return null;
  const listed = agents.find((agent) => agent.subject === caller.subject);
  if (listed !== undefined) return listedIdentity(listed);
  if (agents.some((agent) => agent.id === caller.subject)) return null;
  return { id: caller.subject, groups: caller.groups, customerId: caller.customerId };
};

/** What `config:check` says of the agents in AWS: only a listed subject has groups and a customer. */
export const unlistedSubjectNote = (agents: readonly ListedAgent[]): string => {
  const unlisted = agents.filter((agent) => agent.subject === null).map((agent) => agent.id);
  return [
    "in AWS a token's subject names its agent: a subject no agents: entry lists is an agent with no groups and no customer (unless the stack reads them from named claims)",
    unlisted.length === 0
      ? ''
      : ` (${unlisted.join(', ')} ${unlisted.length === 1 ? 'has' : 'have'} no subject: local only)`,
  ].join('');
};
