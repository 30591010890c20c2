// `npm run config:check -- --aws` against a Secrets Manager stand-in: what a platform team runs
// before pushing, to learn which secrets the deployed functions would not find.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalSecretsManager } from '../../infra/local/secrets-manager.js';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let demo: string;

beforeAll(async () => {
  folder = await temporaryFolder('gateway-secrets-check-');
  await cp(projectPath('examples'), join(folder.path, 'org'), { recursive: true });
  demo = await readFile(projectPath('examples/gateway.config.yaml'), 'utf8');
});
afterAll(async () => {
  await folder.remove();
});

describe('npm run config:check -- --aws', () => {
  it(
    verifies('secrets.check-aws', 'reports each secret missing under the stack prefix, and never a value'),
    async () => {
      const secretsManager = await startLocalSecretsManager();
      try {
        secretsManager.put('approval-gateway/Prod/erp/token', 'never-printed-token');
        secretsManager.put('approval-gateway/Prod/hooks', '{"chat":"https://hooks.example/never-printed"}');
        const file = join(folder.path, 'org', 'secrets.yaml');
        await writeFile(
          file,
          demo
            .replace('value: demo-erp-key-7f3a', 'value: ${secret:erp/token}')
            .replace('token: demo-tools-token-5c1e', 'token: ${secret:hooks#teams}'),
        );
        const run = (stack: string) =>
          runProcess(
            process.execPath,
            ['--import', 'tsx', projectPath('scripts/config-check.ts'), file, '--offline', '--aws', '--stack', stack],
            {
              cwd: projectPath(),
              env: {
                ...process.env,
                DEMO_ERP_URL: 'http://127.0.0.1:1',
                DEMO_CALL_TOOL_URL: 'http://127.0.0.1:2',
                AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.endpoint,
                AWS_ACCESS_KEY_ID: secretsManager.credentials.accessKeyId,
                AWS_SECRET_ACCESS_KEY: secretsManager.credentials.secretAccessKey,
                AWS_REGION: 'local',
                AWS_PROFILE: '',
              },
            },
          );
        const other = await run('Staging');
        expect(other.code, other.stderr).toBe(1);
        expect(other.stderr).toContain(
          'the secret erp/token is not set (AWS Secrets Manager secret approval-gateway/Staging/erp/token)',
        );
        expect(other.stderr).toContain('2 secret references cannot be read in AWS');
        const prod = await run('Prod');
        expect(prod.code, prod.stderr).toBe(1);
        expect(prod.stderr).toContain('1 secret reference cannot be read in AWS');
        expect(prod.stderr).toContain('systems[1].credentials.token: the secret hooks has no text field "teams"');
        expect(`${prod.stdout}${prod.stderr}`).not.toContain('never-printed');
        expect(prod.stderr).not.toContain('erp/token');
        expect(secretsManager.calls.every((call) => call.action === 'secretsmanager:GetSecretValue')).toBe(true);
      } finally {
        await secretsManager.close();
      }
    },
  );
});
