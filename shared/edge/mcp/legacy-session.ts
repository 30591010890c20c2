// 2025-11-25 clients declare their capabilities once, at initialize, and the gateway keeps no
// session. For the one capability it acts on later (URL-mode elicitation), the initialize answer
// carries an Mcp-Session-Id that is itself the record: the declaration sealed for this agent, with
// an expiry. Any instance opens it on a later request; nothing is stored. Clients that declare no
// URL elicitation get no session id, exactly as before.
import * as z from 'zod';
import { isRecord } from '../../objects.js';
import type { Sealer } from '../../sealing.js';
import { declaresUrlElicitation2025 } from './url-elicitation.js';

/** How long a session id is honoured; after it the client gets 404 and initializes again (spec). */
export const legacySessionLifetimeMs = 24 * 60 * 60 * 1000;

const SessionToken = z.object({
  v: z.literal(1),
  agent_id: z.string().min(1),
  url_elicitation: z.literal(true),
  expires_at: z.iso.datetime(),
});

const contextOf = (agentId: string): string => `mcp-session:v1:${agentId}`;

const InitializeMessage = z.looseObject({
  method: z.literal('initialize'),
  params: z.looseObject({ capabilities: z.unknown() }),
});

/**
 * Whether a 2025 request body is an initialize declaring URL-mode elicitation. Any other method is
 * told apart before the schema (every 2025 request asks), sparing zod's failure path.
 */
export const initializeDeclaresUrlElicitation = (parsedBody: unknown): boolean => {
  if (!isRecord(parsedBody) || parsedBody.method !== 'initialize') return false;
  const message = InitializeMessage.safeParse(parsedBody);
  return message.success && declaresUrlElicitation2025(message.data.params.capabilities);
};

export const sessionIdFor = async (sealer: Sealer, agentId: string, nowMs: number): Promise<string> => {
  const token = {
    v: 1,
    agent_id: agentId,
    url_elicitation: true,
    expires_at: new Date(nowMs + legacySessionLifetimeMs).toISOString(),
  };
  const sealed = await sealer.seal(JSON.stringify(token), contextOf(agentId));
  return Buffer.from(sealed, 'utf8').toString('base64url');
};

/** What a request's Mcp-Session-Id says: none sent, URL elicitation declared, or not one of ours (404). */
export type LegacySession = 'none' | 'url_elicitation' | 'unknown';

export const readSessionId = async (
  sealer: Sealer,
  agentId: string,
  sessionId: string | null,
  nowMs: number,
): Promise<LegacySession> => {
  if (sessionId === null) return 'none';
  try {
    const opened = await sealer.open(Buffer.from(sessionId, 'base64url').toString('utf8'), contextOf(agentId));
    const token = SessionToken.safeParse(JSON.parse(opened));
    if (!token.success || token.data.agent_id !== agentId || Date.parse(token.data.expires_at) <= nowMs) {
      return 'unknown';
    }
    return 'url_elicitation';
  } catch {
    return 'unknown';
  }
};
