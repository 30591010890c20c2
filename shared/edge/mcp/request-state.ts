// The `requestState` of a held call handed to the customer by URL elicitation (2026-07-28 multi
// round-trip requests). It travels through the client, so it is sealed (AES-GCM locally, KMS in
// AWS) with the agent in its authenticated context: altered, forged or presented by another agent,
// it does not open. Inside: the call it was minted for (execution, tool, arguments hash) and when
// it stops being good (the call's approval time).
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { Sealer } from '../../sealing.js';

export const RequestState = z.object({
  v: z.literal(1),
  agent_id: z.string().min(1),
  execution_id: z.uuid(),
  tool: z.string().min(1),
  arguments_hash: z.string().min(1),
  /** The held call's expires_at: after it the state is refused (the call has expired anyway). */
  expires_at: z.iso.datetime(),
  /** Makes every minted state distinct (two rounds of one call never share a state). */
  nonce: z.uuid(),
});
export type RequestState = z.infer<typeof RequestState>;

/** Why a state was refused: for the log only; the wire always reads the SDK's one answer. */
export class RequestStateRefused extends Error {
  constructor(reason: string) {
    super(`requestState refused: ${reason}`);
    this.name = 'RequestStateRefused';
  }
}

/** The sealing context: a state opens only for the agent it was minted for. */
const contextOf = (agentId: string): string => `mcp-request-state:v1:${agentId}`;

export const sealRequestState = async (sealer: Sealer, state: Omit<RequestState, 'v' | 'nonce'>): Promise<string> => {
  const full: RequestState = { v: 1, ...state, nonce: randomUUID() };
  const sealed = await sealer.seal(JSON.stringify(full), contextOf(state.agent_id));
  return Buffer.from(sealed, 'utf8').toString('base64url');
};

/**
 * Opens a state for `agentId` at `nowMs`; throws RequestStateRefused when it was altered, minted
 * for another agent, malformed or past its expiry.
 */
export const openRequestState = async (
  sealer: Sealer,
  agentId: string,
  text: string,
  nowMs: number,
): Promise<RequestState> => {
  let opened: string;
  try {
    opened = await sealer.open(Buffer.from(text, 'base64url').toString('utf8'), contextOf(agentId));
  } catch {
    throw new RequestStateRefused('it does not open (altered, or minted for another agent)');
  }
  const state = RequestState.safeParse(JSON.parse(opened));
  if (!state.success || state.data.agent_id !== agentId) throw new RequestStateRefused('unexpected content');
  if (Date.parse(state.data.expires_at) <= nowMs) throw new RequestStateRefused('expired');
  return state.data;
};
