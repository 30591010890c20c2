// Whether a client declared URL-mode elicitation: in a 2026-07-28 request's envelope and in a
// 2025-11-25 initialize's capabilities, for every shape the capability can come in.
import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { initializeDeclaresUrlElicitation } from '../../../shared/edge/mcp/legacy-session.js';
import {
  declaresUrlElicitation2025,
  envelopeDeclaresUrlElicitation,
} from '../../../shared/edge/mcp/url-elicitation.js';
import { verifies } from '../../support/requirements.js';

/** Client capabilities, each with whether they declare URL mode. */
const capabilities: [string, unknown, boolean][] = [
  ['URL mode', { elicitation: { url: {} } }, true],
  ['URL and form mode', { elicitation: { form: {}, url: {} }, roots: {} }, true],
  ['URL mode given as null (present all the same)', { elicitation: { url: null } }, true],
  ['no elicitation at all', {}, false],
  ['other capabilities only', { roots: { listChanged: true }, sampling: {} }, false],
  ['form mode only', { elicitation: { form: {} } }, false],
  ['elicitation without modes', { elicitation: {} }, false],
  ['elicitation as null', { elicitation: null }, false],
  ['elicitation not an object', { elicitation: 'url' }, false],
  ['elicitation as a list', { elicitation: ['url'] }, false],
  ['capabilities as null', null, false],
  ['capabilities as a list', [{ elicitation: { url: {} } }], false],
  ['capabilities as text', 'elicitation', false],
];

describe('URL-mode elicitation declared by a client', () => {
  it(
    verifies('mcp.url-elicitation-capability', 'a 2026-07-28 envelope declares it only with elicitation.url present'),
    () => {
      for (const [what, declared, expected] of capabilities) {
        const envelope = { [PROTOCOL_VERSION_META_KEY]: '2026-07-28', [CLIENT_CAPABILITIES_META_KEY]: declared };
        expect(envelopeDeclaresUrlElicitation(envelope), what).toBe(expected);
      }
      expect(envelopeDeclaresUrlElicitation({ [PROTOCOL_VERSION_META_KEY]: '2026-07-28' })).toBe(false);
      expect(envelopeDeclaresUrlElicitation(undefined)).toBe(false);
      expect(envelopeDeclaresUrlElicitation('envelope')).toBe(false);
    },
  );

  it(
    verifies('mcp.url-elicitation-capability', 'a 2025-11-25 initialize declares it only with elicitation.url present'),
    () => {
      for (const [what, declared, expected] of capabilities) {
        expect(declaresUrlElicitation2025(declared), what).toBe(expected);
      }
      expect(declaresUrlElicitation2025(undefined)).toBe(false);
    },
  );

  it(verifies('mcp.url-elicitation-capability', 'only an initialize declares it for a 2025-11-25 session'), () => {
    const initialize = (params: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params });
    for (const [what, declared, expected] of capabilities) {
      expect(initializeDeclaresUrlElicitation(initialize({ capabilities: declared })), what).toBe(expected);
      // The same capabilities on any other method declare nothing.
      const other = { ...initialize({ capabilities: declared }), method: 'tools/call' };
      expect(initializeDeclaresUrlElicitation(other), what).toBe(false);
    }
    expect(initializeDeclaresUrlElicitation(initialize(undefined))).toBe(false);
    expect(initializeDeclaresUrlElicitation(initialize('capabilities'))).toBe(false);
    expect(initializeDeclaresUrlElicitation([initialize({ capabilities: { elicitation: { url: {} } } })])).toBe(false);
    expect(initializeDeclaresUrlElicitation(null)).toBe(false);
  });
});
