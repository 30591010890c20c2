// What `npm start` prints and refuses about agent tokens: the banner shows literal demo values only,
// never a secret read from the environment, and a configuration giving two agents one token does
// not start.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let demo: string;

beforeAll(async () => {
  folder = await temporaryFolder('gateway-banner-');
  await cp(projectPath('examples'), join(folder.path, 'org'), { recursive: true });
  demo = await readFile(join(folder.path, 'org', 'gateway.config.yaml'), 'utf8');
});
afterAll(async () => {
  await folder?.remove();
});

const variant = async (name: string, text: string): Promise<string> => {
  expect(text).not.toBe(demo);
  const file = join(folder.path, 'org', name);
  await writeFile(file, text);
  return file;
};

describe('the banner of npm start', () => {
  it(verifies(
    'local.banner-secrets',
    'never prints a token or password that came from ${env:…}, only literal demo values',
  ), async () => {
    const secrets = { PROCUREMENT_TOKEN: 'env-procurement-t0ken-4f9a', FINANCE_PASSWORD: 'env-finance-passw0rd-81c2' };
    const file = await variant(
      'from-env.yaml',
      demo
        .replace(`token: ${demoTokens.procurement}`, 'token: ${env:PROCUREMENT_TOKEN}')
        .replace('password: demo-finance-password', 'password: ${env:FINANCE_PASSWORD}'),
    );
    const runtime = await startRuntimeProcess(['--memory', '--config', file], secrets);
    try {
      const output = runtime.output();
      for (const secret of Object.values(secrets)) expect(output).not.toContain(secret);
      expect(output).toMatch(/procurement-agent\s+\(from a reference\)/);
      expect(output).toMatch(/finance-approver\s+\(from a reference\)/);
      // Literal values are demo values, and still shown.
      expect(output).toContain(demoTokens.support);
      expect(output).toContain('demo-operations-password');
      // The ready-to-paste snippets name the first agent, whose token is not shown.
      expect(output).toContain('"Authorization": "Bearer <token>"');
      expect(output).toContain('--header "Authorization: Bearer <token>"');
      // The token from the environment is the one the agent uses.
      const client = await connectAgent(runtime.mcpUrl, secrets.PROCUREMENT_TOKEN);
      expect((await client.listTools()).tools.length).toBeGreaterThan(1);
      await client.close();
    } finally {
      await runtime.stop();
    }
    expect(runtime.output()).not.toContain(secrets.PROCUREMENT_TOKEN);
  }, 120_000);
});

describe('agent tokens at start', () => {
  it(verifies(
    'config.unique-tokens',
    'refuses to start when two agents have the same token, naming both and not the token',
  ), async () => {
    const shared = 'shared-env-t0ken-77d1';
    const file = await variant(
      'same-token.yaml',
      demo
        .replace(`token: ${demoTokens.procurement}`, 'token: ${env:SHARED_TOKEN}')
        .replace(`token: ${demoTokens.support}`, 'token: ${env:SHARED_TOKEN_AGAIN}'),
    );
    const failure = await startRuntimeProcess(['--memory', '--config', file], {
      SHARED_TOKEN: shared,
      SHARED_TOKEN_AGAIN: shared,
    }).then(
      async (started) => {
        await started.stop();
        return 'the runtime started';
      },
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    const message = failure instanceof Error ? failure.message : '';
    expect(message).toContain('did not start');
    expect(message).toContain(
      'agents[1].token: agents "procurement-agent" and "support-agent" have the same token; each agent needs its own',
    );
    expect(message).not.toContain(shared);
  }, 120_000);
});
