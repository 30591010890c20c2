// Approval services for use-case tests: the store and clock the test gives, every other port a
// stub that fails loudly if the code under test reaches it.
import { AesSealer } from '../../shared/adapters/aes-sealer.js';
import type { Clock } from '../../shared/clock.js';
import type { GatewaySnapshot } from '../../shared/control-plane/gateway-snapshot.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { uuidV7Ids } from '../../shared/ids.js';
import type { ApprovalServices } from '../../shared/use-cases/approval-services.js';
import type { CallToolDeps } from '../../shared/use-cases/call-tool.js';

/** A port the test does not expect to be used: calling it rejects, naming it. */
export const unusedPort = (what: string) => () => Promise.reject(new Error(`${what} is not used by this test`));

export const approvalDepsFor = (
  store: ExecutionStore,
  clock: Clock,
  overrides: Partial<ApprovalServices> = {},
): ApprovalServices => ({
  store,
  clock,
  systems: { send: unusedPort('the system client') },
  toolServers: { call: unusedPort('the tool-server client') },
  log: { info: () => undefined, warn: () => undefined },
  controlPlane: { current: unusedPort('the control plane') },
  sealer: { seal: unusedPort('the sealer'), open: unusedPort('the sealer') },
  receiptSigner: { sign: unusedPort('the receipt signer'), publicKeys: unusedPort('the receipt signer') },
  receiptIssuer: () => 'http://127.0.0.1',
  notifier: { heldCall: unusedPort('the notifier') },
  consoleUrl: (id) => `http://127.0.0.1/console/executions/${id}`,
  approvalRuns: { start: unusedPort('the approval runs'), signal: unusedPort('the approval run signal') },
  ...overrides,
});

/** A configuration with one system whose one write (`portal.logins.create`) finance must approve. */
export const heldPortalConfig = (
  properties = '{ note: { type: string } }',
): { text: string; files: Record<string, string> } => ({
  text: [
    'systems:',
    '  - key: portal',
    '    base_url: http://127.0.0.1:9',
    '    operations:',
    '      - id: logins.create',
    '        method: POST',
    '        path: /logins',
    '        description: Creates a login.',
    `        input_schema: { type: object, properties: ${properties} }`,
    'agents:',
    '  - id: agent-1',
    '    token: t',
    '    groups: [staff]',
    'policies: [held.cedar]',
    '',
  ].join('\n'),
  files: {
    'held.cedar':
      '@approval("staff")\n@approvers("finance")\npermit (principal, action == Action::"portal.logins.create", resource);\n',
  },
});

/**
 * What callTool needs to hold calls in a test: the store and clock given, this configuration, a
 * sealer with a fixed key, approval runs that start and are never signalled, and no system.
 */
export const holdingDepsFor = (store: ExecutionStore, clock: Clock, snapshot: GatewaySnapshot): CallToolDeps => ({
  store,
  clock,
  ids: uuidV7Ids,
  systems: { send: unusedPort('the system client') },
  toolServers: { call: unusedPort('the tool-server client') },
  log: { info: () => undefined, warn: () => undefined },
  controlPlane: { current: async () => ({ kind: 'active', snapshot }) },
  sealer: new AesSealer(Buffer.alloc(32, 3)),
  approvalRuns: { start: async () => 'started', signal: unusedPort('the approval run signal') },
  customerUrl: (id) => `http://127.0.0.1/customer/calls/${id}`,
});
