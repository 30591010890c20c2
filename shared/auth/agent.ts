// Who is calling: the agent identity every use-case receives, derived from verified token claims.
export interface AgentIdentity {
  readonly id: string;
  readonly groups: readonly string[];
  /** The customer this agent acts for, when it is an outside agent acting for one. */
  readonly customerId: string | null;
}

/** Which claims of the verified token carry the identity. */
export interface ClaimNames {
  readonly agent: string;
  readonly groups: string;
  readonly customer: string;
}

export const defaultClaimNames: ClaimNames = { agent: 'sub', groups: 'groups', customer: 'customer_id' };

/**
 * API Gateway hands JWT claims over as strings; a list claim arrives as "[a b c]". Both that
 * form and a real array (or a comma-separated string) are accepted.
 */
const listClaim = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  if (typeof value !== 'string') return [];
  const inner = value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value;
  return inner
    .split(/[\s,]+/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
};

const textClaim = (value: unknown): string | null =>
  typeof value === 'string' && value.trim().length > 0 ? value.trim() : null;

/**
 * The agent named by the claims, or null when the agent claim is missing, or when the customer
 * claim is there but is not text: read as no customer, an agent acting for one would act as an
 * inside agent.
 */
export const agentFromClaims = (claims: Readonly<Record<string, unknown>>, names: ClaimNames): AgentIdentity | null => {
  const id = textClaim(claims[names.agent]);
  if (id === null) return null;
  const customer = claims[names.customer];
  if (customer !== undefined && customer !== null && typeof customer !== 'string') return null;
  return {
    id,
    groups: [...new Set(listClaim(claims[names.groups]))].sort(),
    customerId: textClaim(claims[names.customer]),
  };
};
