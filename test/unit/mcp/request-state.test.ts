// The sealed pieces of URL elicitation, with the local AES-GCM sealer: the 2026-07-28 requestState
// (opens only unaltered, for its agent, before its expiry) and the 2025-11-25 session id that
// remembers an initialize's URL elicitation (the same rules; 'unknown' answers 404 at the edge).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AesSealer } from '../../../shared/adapters/aes-sealer.js';
import {
  initializeDeclaresUrlElicitation,
  legacySessionLifetimeMs,
  readSessionId,
  sessionIdFor,
} from '../../../shared/edge/mcp/legacy-session.js';
import { openRequestState, RequestStateRefused, sealRequestState } from '../../../shared/edge/mcp/request-state.js';
import { verifies } from '../../support/requirements.js';

const sealer = new AesSealer(randomBytes(32));
const now = Date.parse('2026-12-01T10:00:00.000Z');
const minted = {
  agent_id: 'support-agent',
  execution_id: '019a0000-0000-7000-8000-000000000001',
  tool: 'erp.refunds.create',
  arguments_hash: 'a'.repeat(64),
  expires_at: '2026-12-02T10:00:00.000Z',
};

/** The text with one character changed at `index` (still base64url). */
const altered = (text: string, index: number): string =>
  `${text.slice(0, index)}${text[index] === 'A' ? 'B' : 'A'}${text.slice(index + 1)}`;

describe('the requestState', () => {
  it(
    verifies('mcp.request-state-sealed', 'opens for its agent before its expiry, with what it was minted for'),
    async () => {
      const state = await sealRequestState(sealer, minted);
      expect(state).toMatch(/^[A-Za-z0-9_-]+$/);
      // Nothing of the call can be read from it.
      expect(state).not.toContain(minted.execution_id);
      expect(Buffer.from(state, 'base64url').toString('utf8')).not.toContain(minted.execution_id);
      const opened = await openRequestState(sealer, minted.agent_id, state, now);
      expect(opened).toMatchObject({ v: 1, ...minted });
      // Each minted state is distinct, even for the same call.
      const second = await sealRequestState(sealer, minted);
      expect(second).not.toBe(state);
      expect((await openRequestState(sealer, minted.agent_id, second, now)).nonce).not.toBe(opened.nonce);
    },
  );

  it(
    verifies('mcp.request-state-sealed', 'is refused altered anywhere, made up, for another agent, or at its expiry'),
    async () => {
      const state = await sealRequestState(sealer, minted);
      const refusals = [
        altered(state, 10),
        altered(state, Math.floor(state.length / 2)),
        altered(state, state.length - 5),
        state.slice(0, -4),
        'not-a-state',
        '',
        Buffer.from('{"v":1}', 'utf8').toString('base64url'),
      ].map((text) => openRequestState(sealer, minted.agent_id, text, now));
      refusals.push(openRequestState(sealer, 'procurement-agent', state, now));
      refusals.push(openRequestState(sealer, minted.agent_id, state, Date.parse(minted.expires_at)));
      // Sealed with another key (another deployment): does not open either.
      refusals.push(openRequestState(new AesSealer(randomBytes(32)), minted.agent_id, state, now));
      for (const refusal of refusals) await expect(refusal).rejects.toBeInstanceOf(RequestStateRefused);
      // A minute before the expiry it still opens.
      await expect(
        openRequestState(sealer, minted.agent_id, state, Date.parse(minted.expires_at) - 60_000),
      ).resolves.toMatchObject(minted);
    },
  );
});

describe('the 2025-11-25 session id', () => {
  it(
    verifies(
      'mcp.url-elicitation-capability',
      'is given only to an initialize declaring URL elicitation, and opens only for its agent within its lifetime',
    ),
    async () => {
      const initialize = (capabilities: unknown) => ({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { capabilities },
      });
      expect(initializeDeclaresUrlElicitation(initialize({ elicitation: { url: {} } }))).toBe(true);
      expect(initializeDeclaresUrlElicitation(initialize({ elicitation: { form: {}, url: {} } }))).toBe(true);
      // An empty elicitation capability means form mode only.
      expect(initializeDeclaresUrlElicitation(initialize({ elicitation: {} }))).toBe(false);
      expect(initializeDeclaresUrlElicitation(initialize({}))).toBe(false);
      expect(initializeDeclaresUrlElicitation({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })).toBe(false);

      const sessionId = await sessionIdFor(sealer, 'support-agent', now);
      expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
      expect(await readSessionId(sealer, 'support-agent', null, now)).toBe('none');
      expect(await readSessionId(sealer, 'support-agent', sessionId, now)).toBe('url_elicitation');
      expect(await readSessionId(sealer, 'procurement-agent', sessionId, now)).toBe('unknown');
      expect(await readSessionId(sealer, 'support-agent', altered(sessionId, 25), now)).toBe('unknown');
      expect(await readSessionId(sealer, 'support-agent', 'made-up', now)).toBe('unknown');
      expect(await readSessionId(sealer, 'support-agent', sessionId, now + legacySessionLifetimeMs)).toBe('unknown');
    },
  );
});
