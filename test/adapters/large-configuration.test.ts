// A configuration of real size, deployed as in AWS: GitHub's OpenAPI description (1,221 tools,
// 13 MB) pushed by config:push to the local DynamoDB, S3 and KMS stand-ins, then loaded by a
// function's control plane, which serves its tools. Prints what it measured (push time, object
// size, load time, memory); asserts only what is served.
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoredControlPlane } from '../../shared/control-plane/stored-control-plane.js';
import { type BundleStands, configPushRunner, freshStores, startBundleStands } from '../support/bundle-stores.js';
import { ManualClock } from '../support/clock.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';

let stands: BundleStands;
let folder: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  stands = await startBundleStands();
  folder = await temporaryFolder('gateway-github-');
});
afterAll(async () => {
  await folder.remove();
  await stands.close();
});

const githubConfiguration = async (): Promise<string> => {
  const description = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
  await copyFile(description, join(folder.path, 'api.github.com.json'));
  await mkdir(join(folder.path, 'policies'));
  await writeFile(
    join(folder.path, 'policies', 'github.cedar'),
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
  const file = join(folder.path, 'gateway.config.yaml');
  await writeFile(
    file,
    [
      'systems:',
      '  - key: github',
      '    base_url: https://api.github.com',
      '    openapi: api.github.com.json',
      'policies:',
      '  - policies/github.cedar',
      '',
    ].join('\n'),
  );
  return file;
};

const mebibytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

describe('a configuration holding GitHub’s description', () => {
  it(verifies(
    ['aws.config-real-size', 'aws.config-bundles'],
    'pushes, and the functions’ control plane loads and serves its tools',
  ), async () => {
    const target = await freshStores(stands);
    const runner = await configPushRunner(stands);
    try {
      const file = await githubConfiguration();
      const pushStarted = performance.now();
      const pushed = await runner.push(target, [file]);
      const pushMs = performance.now() - pushStarted;
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(pushed.stdout).toMatch(/\(1221 tools, a [\d,]+ KiB bundle\)/);

      const deployed = await target.store.deployed();
      if (deployed?.kind !== 'signed') throw new Error('expected a signed pointer');
      const before = process.memoryUsage();
      const loadStarted = performance.now();
      const state = await new StoredControlPlane(target.store, {}, new ManualClock(), {
        info: () => undefined,
        warn: (message, ...fields) => {
          throw new Error(`${message} ${JSON.stringify(fields)}`);
        },
      }).current();
      const loadMs = performance.now() - loadStarted;
      const after = process.memoryUsage();
      if (state.kind !== 'active') throw new Error(`expected the configuration to load: ${JSON.stringify(state)}`);
      const { catalog, policy } = state.snapshot;
      expect(catalog.tools).toHaveLength(1221);
      const developer = { id: 'dev-agent', groups: ['developers'], customerId: null };
      const listed = catalog.tools.filter((tool) => policy.isListed(developer, tool));
      expect(listed.length).toBeGreaterThan(400);
      expect(listed.every((tool) => tool.access === 'read')).toBe(true);
      expect(listed.map((tool) => tool.name)).toContain('github.repos_get');
      const objectBytes = Number(/a ([\d,]+) KiB bundle/.exec(pushed.stdout)?.[1]?.replaceAll(',', '')) * 1024;
      process.stdout.write(
        `GitHub's description: push ${(pushMs / 1000).toFixed(1)} s (a new process: compile, sign, upload, point); ` +
          `bundle object ${mebibytes(objectBytes)}; ` +
          `load ${(loadMs / 1000).toFixed(2)} s (fetch, hash, kms:Verify, decode, 1,221 validators, Cedar); ` +
          `heap ${mebibytes(before.heapUsed)} → ${mebibytes(after.heapUsed)}, rss ${mebibytes(after.rss)}; ` +
          `${listed.length} tools listed to a developer\n`,
      );
    } finally {
      await runner.remove();
    }
  }, 120_000);
});
