// `${secret:…}` in the local runtime and in checks made away from AWS: read from a GATEWAY_SECRET_
// variable or the data folder, a name kept inside its folder, a missing one saying where to put it.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localSecrets, secretVariable } from '../../../infra/local/local-secrets.js';
import { loadConfigText } from '../../../shared/config/load.js';
import { formatProblem } from '../../../shared/config/resolved.js';
import { verifies } from '../../support/requirements.js';
import { temporaryFolder } from '../../support/runtime-process.js';
import { secretsConfig as configText } from '../../support/snapshots.js';

describe('secrets in the local runtime', () => {
  const load = (text: string, dataDir: string | null, environment: Record<string, string> = {}) => {
    const loaded = loadConfigText(text, 'gateway.config.yaml', environment, {
      secrets: localSecrets(dataDir, environment),
    });
    return loaded.ok
      ? { ok: true as const, config: loaded.config }
      : { ok: false as const, problems: loaded.problems.map(formatProblem) };
  };

  it(verifies('secrets.local-read', 'come from a GATEWAY_SECRET_ variable, else from the data folder'), async () => {
    const folder = (await temporaryFolder('secrets-')).path;
    await mkdir(join(folder, 'secrets', 'erp'), { recursive: true, mode: 0o700 });
    await writeFile(join(folder, 'secrets', 'erp', 'token'), 'file-token\n', { mode: 0o600 });
    await writeFile(join(folder, 'secrets', 'crm'), '{"password":"file-pass"}', { mode: 0o600 });
    const fromFiles = load(configText('http://127.0.0.1:1'), folder);
    expect(fromFiles.ok && fromFiles.config.systems.map((system) => system.credentials)).toEqual([
      { type: 'bearer', token: 'file-token' },
      { type: 'basic', username: 'gateway', password: 'file-pass' },
    ]);
    expect(secretVariable('erp/token')).toBe('GATEWAY_SECRET_ERP_TOKEN');
    const fromVariable = load(configText('http://127.0.0.1:1'), folder, { GATEWAY_SECRET_ERP_TOKEN: 'variable-token' });
    expect(fromVariable.ok && fromVariable.config.systems[0]?.credentials).toEqual({
      type: 'bearer',
      token: 'variable-token',
    });
  });

  it(
    verifies(
      ['secrets.local-read', 'secrets.stored-references'],
      'a missing one says where to put it; a name cannot leave the folder',
    ),
    async () => {
      const folder = (await temporaryFolder('secrets-')).path;
      await writeFile(join(folder, 'data.key'), 'not-for-configurations', { mode: 0o600 });
      await mkdir(join(folder, 'secrets'), { mode: 0o700 });
      await chmod(join(folder, 'secrets'), 0o700);
      const escaping = configText('http://127.0.0.1:1').replace('erp/token', '../data.key');
      const outcome = load(escaping, folder, { GATEWAY_SECRET_CRM: '{"password":"p"}' });
      expect(outcome.ok).toBe(false);
      const problems = outcome.ok ? [] : outcome.problems;
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain('systems[0].credentials.token');
      expect(problems[0]).toContain(
        'the secret ../data.key is not set (set GATEWAY_SECRET____DATA_KEY, or write it to',
      );
      expect(problems.join('\n')).not.toContain('not-for-configurations');
    },
  );

  it(verifies('secrets.stored-references', 'a check elsewhere notes each unset reference and goes on'), () => {
    const notes: string[] = [];
    const loaded = loadConfigText(
      configText('http://127.0.0.1:1'),
      'gateway.config.yaml',
      {},
      {
        unsetVariables: 'placeholder',
        onUnset: (reference, path) => notes.push(`${path}: ${reference}`),
        secrets: localSecrets(null, {}),
      },
    );
    expect(loaded.ok).toBe(true);
    expect(notes).toEqual([
      'systems[0].credentials.token: ${secret:erp/token}',
      'systems[1].credentials.password: ${secret:crm#password}',
    ]);
  });
});
