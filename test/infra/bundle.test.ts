// The MCP function as Lambda would load it: bundled by the stack's own esbuild settings, then
// imported from its asset folder and invoked. Cedar's Node build reads its wasm when imported,
// so a bundle that cannot find it (or trips over an ESM/CommonJS seam) fails here, which no
// unbundled test would notice.
import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayStack } from '../../infra/gateway-stack.js';
import { projectPath } from '../../infra/paths.js';

let out: string;
let asset: string;

beforeAll(async () => {
  out = await mkdtemp(join(projectPath(), '.bundle-test-'));
  const app = new App({
    outdir: join(out, 'cdk.out'),
    context: { '@aws-cdk/core:failSynthOnValidationErrors': false },
  });
  new GatewayStack(app, 'BundleCheck');
  const assembly = app.synth();
  const folders = (await readdir(assembly.directory)).filter((name) => name.startsWith('asset.'));
  let found: string | undefined;
  for (const folder of folders) {
    const files = await readdir(join(assembly.directory, folder));
    if (files.includes('cedar_wasm_bg.wasm')) found = join(assembly.directory, folder);
  }
  if (found === undefined) throw new Error('no bundled asset ships the Cedar wasm');
  // Inside the project, so the AWS SDK (provided by the Lambda runtime) resolves from node_modules.
  asset = join(out, 'function');
  await cp(found, asset, { recursive: true });
}, 120_000);

afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('the bundled MCP function', () => {
  it('[aws.stack-shape] loads with Cedar beside it and answers an unauthenticated request with the challenge', async () => {
    const probe = join(asset, 'probe.mjs');
    await writeFile(
      probe,
      [
        "process.env.EXECUTIONS_TABLE = 'executions';",
        "process.env.CONFIG_TABLE = 'config';",
        "process.env.DATA_KEY_ID = 'alias/approval-gateway';",
        "process.env.AWS_REGION = 'eu-west-1';",
        "const { handler } = await import('./index.mjs');",
        'export const invoke = (event) => handler(event, { getRemainingTimeInMillis: () => 10_000, functionName: "mcp", awsRequestId: "probe" });',
      ].join('\n'),
    );
    const module: unknown = await import(pathToFileURL(probe).href);
    if (typeof module !== 'object' || module === null || !('invoke' in module) || typeof module.invoke !== 'function') {
      throw new Error('the probe did not load');
    }
    const result: unknown = await module.invoke({
      version: '2.0',
      routeKey: 'POST /mcp',
      rawPath: '/mcp',
      rawQueryString: '',
      headers: { host: 'api.example.com', 'content-type': 'application/json' },
      isBase64Encoded: false,
      body: '{}',
      requestContext: {
        accountId: '1',
        apiId: 'api',
        domainName: 'api.example.com',
        domainPrefix: 'api',
        http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'probe' },
        requestId: 'r',
        routeKey: 'POST /mcp',
        stage: '$default',
        time: '',
        timeEpoch: 0,
      },
    });
    expect(result).toMatchObject({
      statusCode: 401,
      headers: {
        'www-authenticate': expect.stringContaining(
          'resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"',
        ),
      },
    });
  });
});
