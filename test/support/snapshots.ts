// Configuration snapshots for tests, built by the real loader from small configuration texts.

import { formatProblem } from '../../shared/config/resolved.js';
import type { GatewaySnapshot } from '../../shared/control-plane/gateway-snapshot.js';
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

/** Two systems whose credentials are `${secret:…}` references: a whole secret, and a JSON secret's field. */
export const secretsConfig = (erpUrl: string) =>
  [
    'systems:',
    '  - key: erp',
    `    base_url: ${erpUrl}`,
    '    credentials: { type: bearer, token: "${secret:erp/token}" }',
    '    operations:',
    '      - { id: orders.list, method: GET, path: /orders, description: Lists orders. }',
    '  - key: crm',
    '    base_url: http://127.0.0.1:9',
    '    credentials: { type: basic, username: gateway, password: "${secret:crm#password}" }',
    '    operations:',
    '      - { id: notes.add, method: POST, path: /notes, description: Adds a note. }',
    'policies: []',
    '',
  ].join('\n');

export interface SnapshotFiles {
  /** The files the configuration names (OpenAPI documents, policies), by path. */
  readonly files?: Readonly<Record<string, string>>;
  readonly environment?: Readonly<Record<string, string>>;
  /** The configuration file's own name. */
  readonly file?: string;
}

/** The snapshot a configuration text loads to; a refused configuration throws, listing its problems. */
export const snapshotOf = async (text: string, options: SnapshotFiles = {}): Promise<GatewaySnapshot> => {
  const files = options.files ?? {};
  const outcome = await loadSnapshot({
    text,
    file: options.file ?? 'test.yaml',
    environment: options.environment ?? {},
    files: { read: async (path) => (Object.hasOwn(files, path) ? files[path] : undefined) },
  });
  if (!outcome.ok)
    throw new Error(`expected the configuration to load:\n${outcome.problems.map(formatProblem).join('\n')}`);
  return outcome.snapshot;
};
