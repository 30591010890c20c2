// `npm run policy:replay` as a process, reading a real local store (dynalite) at its endpoint as it
// reads a deployed table: a proposal that would deny a recorded call fails CI under --fail-on
// denied with the counts in JSON (a secret the policy reads counted apart, its sealed value never
// printed); a proposal that does not compile exits 2 naming its file and line.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import type { Execution } from '../../shared/executions/execution.js';
import { anExecution } from '../support/executions.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';
import { benchFiles, standardPolicy } from '../support/use-case-bed.js';

const sealed = 'SEALED-CIPHERTEXT-never-shown';

describe('npm run policy:replay', () => {
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let local: TestStore;
  const ids: Record<'small' | 'key', string> = { small: '', key: '' };

  const replay = (args: readonly string[]) => {
    const { AWS_PROFILE: _profile, ...inherited } = process.env;
    return runProcess(
      process.execPath,
      [
        '--import',
        'tsx',
        projectPath('scripts/policy-replay.ts'),
        ...['--config', join(folder.path, 'gateway.config.yaml'), '--offline'],
        ...['--endpoint', local.dynamodb.endpoint, '--table', 'executions', '--json'],
        ...args,
      ],
      {
        cwd: projectPath(),
        env: {
          ...inherited,
          AWS_CONFIG_FILE: '/nonexistent',
          AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
          AWS_ACCESS_KEY_ID: local.dynamodb.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: local.dynamodb.credentials.secretAccessKey,
        },
      },
    );
  };

  beforeAll(async () => {
    folder = await temporaryFolder('gateway-policy-replay-');
    for (const [name, text] of Object.entries(benchFiles())) await writeFile(join(folder.path, name), text);
    // The proposal: orders under 500 are refused, and so are orders that carry an api_key (a secret).
    const forbid =
      '\n@id("no-small-orders")\nforbid (principal, action == Action::"erp.orders.create", resource)\n' +
      'when { context.arguments.amount.lessThan(decimal("500.0")) || context.arguments has api_key };\n';
    await writeFile(join(folder.path, 'proposed.cedar'), `${standardPolicy}${forbid}`);
    const broken = `${standardPolicy}\npermit (principal, action, resource) when { context.arguments.nope };\n`;
    await writeFile(join(folder.path, 'broken.cedar'), broken);
    local = await startTestStore();
    const put = async (hoursAgo: number, fields: Partial<Execution>) => {
      const execution = anExecution({
        agent_groups: ['procurement'],
        status: 'succeeded',
        created_at: new Date(Date.now() - hoursAgo * 3_600_000).toISOString(),
        ...fields,
      });
      expect(await local.store.create(execution)).toEqual({ kind: 'created' });
      return execution.execution_id;
    };
    await put(3, { tool: 'erp.orders.list', arguments_json: '{"vendor":"acme"}' });
    ids.small = await put(2, { tool: 'erp.orders.create', arguments_json: '{"amount":"200","vendor":"acme"}' });
    ids.key = await put(1, {
      tool: 'erp.orders.create',
      arguments_json: '{"amount":"900","api_key":"[REDACTED]","vendor":"acme"}',
      sealed_arguments: sealed,
      secret_pointers: ['/api_key'],
    });
  });
  afterAll(async () => {
    await local?.close();
    await folder?.remove();
  });

  it(
    verifies(
      ['replay.exit-status', 'replay.not-replayable'],
      '--fail-on denied exits 1 when a recorded call would become denied; a proposal that does not compile exits 2 at file:line',
    ),
    async () => {
      const [denied, broken] = await Promise.all([
        replay(['--policies', join(folder.path, 'proposed.cedar'), '--fail-on', 'denied']),
        replay(['--policies', join(folder.path, 'broken.cedar')]),
      ]);
      expect(denied.code, denied.stderr).toBe(1);
      const { source, report } = JSON.parse(denied.stdout);
      expect(source).toBe('the table executions');
      expect(report).toMatchObject({
        read: 3,
        replayed: 2,
        moves: { to_denied: { count: 1, examples: [ids.small] }, run_to_held: { count: 0 } },
        not_replayable: { secret: { count: 1, examples: [ids.key] } },
      });
      expect(denied.output).not.toContain(sealed);
      expect(broken.code).toBe(2);
      expect(broken.stdout).toBe('');
      const line = standardPolicy.split('\n').length + 1;
      expect(broken.stderr).toContain(`  ${join(folder.path, 'broken.cedar')}:${line}: policies: `);
      expect(broken.stderr).toContain('nope');
    },
  );
});
