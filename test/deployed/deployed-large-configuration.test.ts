// A configuration of real size through the synthesized stack: GitHub's OpenAPI description (1,221
// tools, 13 MB) pushed by config:push to the stack's table, bucket and signing key, then loaded by
// the shipped MCP bundle within its memory setting and served to an agent of the pool. Prints what
// it measured (push, bundle size, the first tools/list with the load, the next one); asserts only
// what is served.
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { deployedAssembly } from './assembly.js';
import { mcpSender, pushConfiguration, structured } from './organization.js';
import { type DeployedStack, functionId, startDeployedStack } from './stack.js';

const developer = { id: 'docs-agent', clientId: '6docsagentclient0000000000', secret: 'docs-agent-secret' };

const githubConfiguration = async (folder: string): Promise<string> => {
  const description = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
  await copyFile(description, join(folder, 'api.github.com.json'));
  await mkdir(join(folder, 'policies'));
  await writeFile(
    join(folder, 'policies', 'github.cedar'),
    [
      '@id("developers-read")',
      'permit (principal in Group::"developers", action in Action::"read", resource);',
      '@id("maintainers-write-approved")',
      '@approval("staff")',
      '@approvers("owners")',
      'permit (principal in Group::"maintainers", action in Action::"write", resource);',
      '@id("no-repository-deletion")',
      'forbid (principal, action == Action::"github.repos_delete", resource);',
      '',
    ].join('\n'),
  );
  const file = join(folder, 'gateway.config.yaml');
  await writeFile(
    file,
    [
      'systems:',
      '  - key: github',
      '    base_url: https://api.github.com',
      '    openapi: api.github.com.json',
      'agents:',
      `  - id: ${developer.id}`,
      `    subject: ${developer.clientId}`,
      '    groups: [developers]',
      'policies:',
      '  - policies/github.cedar',
      '',
    ].join('\n'),
  );
  return file;
};

const mebibytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

describe('the synthesized stack, a configuration holding GitHub’s description', () => {
  let stack: DeployedStack;
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;

  beforeAll(async () => {
    stack = await startDeployedStack(await deployedAssembly());
    folder = await temporaryFolder('gateway-deployed-github-');
  });
  afterAll(async () => {
    await stack?.close();
    await folder?.remove();
  });

  it(verifies(
    ['aws.config-real-size', 'aws.config-bundles', 'deployed.runs-what-ships'],
    'pushes, and the shipped MCP bundle loads it within its memory and serves its tools',
  ), async () => {
    const file = await githubConfiguration(folder.path);
    const pushStarted = performance.now();
    const pushed = await pushConfiguration(stack, file);
    const pushMs = performance.now() - pushStarted;
    expect(pushed).toMatch(/\(1221 tools, a [\d,]+ KiB bundle\)/);

    const client = { id: developer.clientId, secret: developer.secret };
    await stack.agentPool.addClient(client);
    const authorization = `Bearer ${await stack.agentPool.token(client, stack.agentPool.scope)}`;
    const send = mcpSender(stack);
    const mcp = stack.functions.get(functionId(stack, 'Mcp'));
    const listAll = async () => {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = JSON.parse(await send('tools/list', cursor === undefined ? {} : { cursor }, { authorization }));
        names.push(...page.result.tools.map((tool: { name: string }) => tool.name));
        cursor = page.result.nextCursor;
      } while (cursor !== undefined);
      return names;
    };
    const firstStarted = performance.now();
    const names = await listAll().catch((error: unknown) => {
      throw new Error(`${String(error)}\n${mcp?.logs()}`);
    });
    const firstMs = performance.now() - firstStarted;
    const nextStarted = performance.now();
    expect(await listAll()).toEqual(names);
    const nextMs = performance.now() - nextStarted;

    // Only the reads are offered to a developer, the gateway's own tools beside them.
    expect(names.length).toBeGreaterThan(400);
    expect(names).toContain('github.repos_get');
    expect(names).not.toContain('github.repos_delete');
    expect(names).not.toContain('github.repos_create_for_authenticated_user');
    // A write is not offered, so a call to one is refused as unknown.
    const refused = structured(
      await send(
        'tools/call',
        { name: 'github.repos_create_for_authenticated_user', arguments: { name: 'x' } },
        { authorization },
      ),
    );
    expect(refused).toMatchObject({ status: 'denied', code: 'unknown_tool' });

    const bundleBytes = Number(/a ([\d,]+) KiB bundle/.exec(pushed)?.[1]?.replaceAll(',', '')) * 1024;
    process.stdout.write(
      `GitHub's description through the synthesized stack: push ${(pushMs / 1000).toFixed(1)} s ` +
        `(a new process: compile, sign, upload, point); bundle object ${mebibytes(bundleBytes)}; ` +
        `first tools/list ${(firstMs / 1000).toFixed(2)} s (a new instance: import, fetch, hash, kms:Verify, ` +
        `decode, validators, Cedar); next ${nextMs.toFixed(0)} ms; ${names.length} tools listed to a developer\n`,
    );
  }, 180_000);
});
