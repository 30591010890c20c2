// Configuration snapshots for tests, built by the real loader from small configuration texts.

import type { GatewaySnapshot } from '../../shared/control-plane/snapshot.js';
import { loadSnapshot } from '../../shared/control-plane/snapshot.js';

export const adminOnlyConfig = (options: { enabled?: boolean; staleness?: string; extraTool?: boolean } = {}) =>
  [
    'settings:',
    `  enabled: ${options.enabled ?? true}`,
    `  allowed_staleness: ${options.staleness ?? '60s'}`,
    'systems:',
    '  - key: crm',
    '    base_url: http://127.0.0.1:9',
    '    operations:',
    '      - id: notes.add',
    '        method: POST',
    '        path: /notes',
    '        description: Adds a note.',
    ...(options.extraTool
      ? ['      - id: notes.list', '        method: GET', '        path: /notes', '        description: Lists notes.']
      : []),
    'policies: []',
    '',
  ].join('\n');

export const snapshotOf = async (text: string): Promise<GatewaySnapshot> => {
  const outcome = await loadSnapshot({
    text,
    file: 'test.yaml',
    environment: {},
    files: { read: async () => undefined },
  });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.problems));
  return outcome.snapshot;
};
