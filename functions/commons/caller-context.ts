// The caller as an authorizer hands it to the functions behind it: API Gateway passes a Lambda
// authorizer's context on (`requestContext.authorizer.lambda` on the HTTP API, `requestContext.
// authorizer` on the WebSocket API) and the local front puts the same there. The context holds
// strings only, so the caller travels as a few of them, lists rendered the way API Gateway renders
// JWT claims ("[a b]"). Only the edge writes it; the functions identify the agent from it with the
// configuration they hold (identifyCaller), never from the request itself.
import { type Caller, listClaim, textClaim } from '../../shared/auth/agent.js';

export type CallerContext = Readonly<Record<string, string>>;

export const callerContext = (caller: Caller): CallerContext =>
  caller.kind === 'listed'
    ? { agentId: caller.agentId }
    : {
        subject: caller.subject,
        groups: `[${caller.groups.join(' ')}]`,
        customerId: caller.customerId ?? '',
        expiresAt: caller.expiresAt === null ? '' : String(caller.expiresAt),
      };

/** The caller an authorizer's context names, or null when it names none (the token was not valid). */
export const callerFromContext = (context: Readonly<Record<string, unknown>>): Caller | null => {
  const subject = textClaim(context.subject);
  if (subject !== null) {
    const expiresAt = Number(textClaim(context.expiresAt) ?? Number.NaN);
    return {
      kind: 'token',
      subject,
      groups: listClaim(context.groups),
      customerId: textClaim(context.customerId),
      expiresAt: Number.isFinite(expiresAt) ? expiresAt : null,
    };
  }
  const agentId = textClaim(context.agentId);
  return agentId === null ? null : { kind: 'listed', agentId };
};
