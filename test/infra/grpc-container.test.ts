// The gRPC service's container entry, built as the Dockerfile builds it (one esbuild bundle with
// Cedar's wasm and the protos beside it) and run as the task runs it: it starts from its
// environment alone, answers the load balancer's health check, and drains on SIGTERM.
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { checkHealth } from '../support/grpc-client.js';
import { verifies } from '../support/requirements.js';
import { startProcess } from '../support/spawn.js';

let folder: string;

/** A port nothing listens on now (the entry is told it, as the task definition tells it). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });

/** The esbuild line of the Dockerfile's build stage, as options. */
const bundleAsTheDockerfileDoes = async (): Promise<void> => {
  const dockerfile = await readFile(projectPath('Dockerfile'), 'utf8');
  const banner = /"--banner:js=([^"]+)"/.exec(dockerfile)?.[1];
  if (banner === undefined) throw new Error('the Dockerfile no longer bundles with a banner');
  await build({
    entryPoints: [projectPath('infra/container/grpc-main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    mainFields: ['module', 'main'],
    minify: true,
    outfile: join(folder, 'grpc-main.mjs'),
    banner: { js: banner },
    logLevel: 'silent',
  });
  await cp(
    projectPath('node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm_bg.wasm'),
    join(folder, 'cedar_wasm_bg.wasm'),
  );
  await cp(projectPath('proto'), join(folder, 'proto'), { recursive: true });
};

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'grpc-container-'));
  await bundleAsTheDockerfileDoes();
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('the gRPC container entry', () => {
  it(
    verifies('aws.grpc-container-entry', 'starts from its environment, reports SERVING, and drains on SIGTERM'),
    async () => {
      const port = await freePort();
      const running = startProcess(process.execPath, [join(folder, 'grpc-main.mjs')], {
        cwd: folder,
        env: {
          PATH: process.env.PATH,
          AWS_REGION: 'eu-west-1',
          AWS_ACCESS_KEY_ID: 'unused',
          AWS_SECRET_ACCESS_KEY: 'unused',
          EXECUTIONS_TABLE: 'executions',
          CONFIG_TABLE: 'config',
          CONFIG_BUCKET: 'config-bundles',
          CONFIG_SIGNING_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/config-signing',
          DATA_KEY_ID: 'alias/data',
          STATE_MACHINE_ARN: 'arn:aws:states:eu-west-1:000000000000:stateMachine:approvals',
          AGENT_JWT_ISSUER: 'https://issuer.example.com',
          AGENT_JWT_AUDIENCE: 'agents',
          GRPC_PORT: String(port),
        },
        timeoutMs: 60_000,
      });
      try {
        // It says when it listens; the health check then answers from the protos beside the bundle.
        await expect.poll(() => running.output(), { timeout: 30_000, interval: 100 }).toContain('listening');
        expect(await checkHealth(`127.0.0.1:${port}`)).toBe('SERVING');
        running.child.kill('SIGTERM');
        expect(await running.exit).toEqual({ code: 0, signal: null });
      } finally {
        running.child.kill('SIGKILL');
      }
    },
  );
});
