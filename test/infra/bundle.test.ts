// The functions as Lambda would load them: bundled by the stack's own esbuild settings, then
// imported from their asset folders and invoked. Cedar's Node build reads its wasm when imported,
// so a bundle that cannot find it (or trips over an ESM/CommonJS seam) fails here, which no
// unbundled test would notice.
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalStateMachine } from '../../infra/constructs/approval-state-machine.js';
import { ApproverConsole } from '../../infra/constructs/approver-console.js';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { GatewayStack } from '../../infra/gateway-stack.js';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';
import { child, isObject, logicalIdOf, resourceProperties } from './synthesis.js';

/** What the deployed functions read, with local stand-ins (nothing here reaches AWS). */
const probeEnvironment = {
  EXECUTIONS_TABLE: 'executions',
  CONFIG_TABLE: 'config',
  CONFIG_BUCKET: 'config-bundles',
  CONFIG_SIGNING_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/config-signing',
  DATA_KEY_ID: 'alias/approval-gateway',
  RECEIPT_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/receipts',
  STATE_MACHINE_ARN: 'arn:aws:states:eu-west-1:111111111111:stateMachine:approvals',
  API_URL: 'https://api.example.com',
  SESSION_KEY_ID: 'alias/approval-gateway-sessions',
  OIDC_ISSUER: 'https://login.example.com',
  OIDC_CLIENT_ID: 'console',
  AWS_REGION: 'eu-west-1',
  CONNECTIONS_URL: 'https://abc123.execute-api.eu-west-1.amazonaws.com/live',
  AGENT_JWT_ISSUER: 'https://login.example.com',
  AGENT_JWT_AUDIENCE: 'gateway',
};

type Invoke = (event: unknown) => Promise<unknown>;
let out: string;
/** The bundled functions' asset folders, copied inside the project, by function. */
const assets = new Map<string, string>();
/** The S3 key of each function's code asset, by function. */
const assetKeys = new Map<string, string>();

beforeAll(async () => {
  out = await mkdtemp(join(projectPath(), '.bundle-test-'));
  const app = new App({
    outdir: join(out, 'cdk.out'),
    context: { '@aws-cdk/core:failSynthOnValidationErrors': false },
  });
  const stack = new GatewayStack(app, 'BundleCheck');
  const assembly = app.synth();
  const template = Template.fromStack(stack);
  const approvals = child(stack, 'Approvals', ApprovalStateMachine);
  const functions = {
    mcp: child(stack, 'Mcp', GatewayFunction),
    'held-call-steps': approvals.steps,
    reconciler: approvals.reconciler,
    console: child(stack, 'Console', ApproverConsole).console,
    'resource-metadata': child(stack, 'ResourceMetadata', GatewayFunction),
    'call-tool-socket': child(stack, 'CallToolSocket', GatewayFunction),
    'agent-authorizer': child(stack, 'AgentAuthorizer', GatewayFunction),
  };
  for (const [name, fn] of Object.entries(functions)) {
    const code = resourceProperties(template, logicalIdOf(fn.function)).Code;
    const key = isObject(code) ? String(code.S3Key) : '';
    assetKeys.set(name, key);
    const folder = join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`);
    const files = await readdir(folder);
    // The metadata function, the console and the channel's authorizer ship without Cedar: they must not need it.
    const needsCedar = !['resource-metadata', 'console', 'agent-authorizer'].includes(name);
    if (files.includes('cedar_wasm_bg.wasm') !== needsCedar) {
      throw new Error(`the ${name} bundle ${needsCedar ? 'does not ship' : 'ships'} the Cedar wasm`);
    }
    // Inside the project, so the AWS SDK (provided by the Lambda runtime) resolves from node_modules.
    const copy = join(out, name);
    await cp(folder, copy, { recursive: true });
    assets.set(name, copy);
  }
  // The console once more, loaded apart (a module loads once per folder) with customer sign-in configured.
  const customers = join(out, 'console-customers');
  await cp(join(out, 'console'), customers, { recursive: true });
  assets.set('console-customers', customers);
}, 180_000);

afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

/** Loads a bundled handler the way the Lambda runtime does, with the probe's environment. */
const load = async (name: string, extra: Record<string, string> = {}): Promise<Invoke> => {
  const folder = assets.get(name);
  if (folder === undefined) throw new Error(`no bundle for ${name}`);
  const probe = join(folder, 'probe.mjs');
  await writeFile(
    probe,
    [
      `Object.assign(process.env, ${JSON.stringify({ ...probeEnvironment, ...extra })});`,
      "const { handler } = await import('./index.mjs');",
      `export const invoke = (event) => handler(event, { getRemainingTimeInMillis: () => 10_000, functionName: ${JSON.stringify(name)}, awsRequestId: "probe" });`,
    ].join('\n'),
  );
  const module: unknown = await import(pathToFileURL(probe).href);
  if (typeof module !== 'object' || module === null || !('invoke' in module) || typeof module.invoke !== 'function') {
    throw new Error(`the ${name} probe did not load`);
  }
  return module.invoke as Invoke;
};

const httpEvent = (method: string, path: string, body?: string) => ({
  version: '2.0',
  routeKey: '$default',
  rawPath: path,
  rawQueryString: '',
  headers: { host: 'api.example.com', 'content-type': 'application/json' },
  isBase64Encoded: false,
  ...(body === undefined ? {} : { body }),
  requestContext: {
    accountId: '1',
    apiId: 'api',
    domainName: 'api.example.com',
    domainPrefix: 'api',
    http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'probe' },
    requestId: 'r',
    routeKey: '$default',
    stage: '$default',
    time: '',
    timeEpoch: 0,
  },
});

describe('the bundled functions', () => {
  it(verifies('aws.stack-shape', 'gives every function its own bundle (CDK does not reuse one bundle for all)'), () => {
    expect(assetKeys.size).toBe(7);
    expect(new Set(assetKeys.values()).size).toBe(assetKeys.size);
  });

  it(
    verifies(
      'aws.stack-shape',
      'loads the MCP function with Cedar beside it and answers an unauthenticated request with the challenge',
    ),
    async () => {
      const invoke = await load('mcp');
      const result = await invoke(httpEvent('POST', '/mcp', '{}'));
      expect(result).toMatchObject({
        statusCode: 401,
        headers: {
          'www-authenticate': expect.stringContaining(
            'resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"',
          ),
        },
      });
    },
  );

  it(
    verifies('aws.stack-traces-mapped', 'links every module of every bundle to its source map, shipped beside it'),
    async () => {
      for (const [name, folder] of assets) {
        const files = await readdir(folder);
        // Not the probe this test writes beside a bundle to invoke it.
        const modules = files.filter((file) => file.endsWith('.mjs') && file !== 'probe.mjs');
        expect(modules.length, name).toBeGreaterThan(0);
        for (const module of modules) {
          const text = await readFile(join(folder, module), 'utf8');
          expect(text.trimEnd().endsWith(`//# sourceMappingURL=${module}.map`), `${name}/${module}`).toBe(true);
          expect(files, `${name}/${module}`).toContain(`${module}.map`);
        }
      }
      const map: unknown = JSON.parse(await readFile(join(assets.get('mcp') ?? '', 'index.mjs.map'), 'utf8'));
      const sources: unknown[] = isObject(map) && Array.isArray(map.sources) ? map.sources : [];
      expect(sources.some((source) => String(source).endsWith('functions/mcp.ts'))).toBe(true);
    },
  );

  it(
    verifies('aws.approval-resources', 'loads the console function and sends a signed-out approver to sign in'),
    async () => {
      const invoke = await load('console');
      const result = await invoke(httpEvent('GET', '/console'));
      expect(result).toMatchObject({
        statusCode: 303,
        headers: { location: `/console/sign-in?next=${encodeURIComponent('/console')}` },
      });
    },
  );

  it(
    verifies(
      'customer.sign-in-unconfigured',
      'loads the console function without a customer provider: its customer pages say customer sign-in is not configured (503)',
    ),
    async () => {
      const invoke = await load('console');
      for (const [method, path] of [
        ['GET', '/customer/calls/0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55'],
        ['POST', '/customer/calls/0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55/answer'],
        ['GET', '/customer/sign-in'],
      ] as const) {
        const result = await invoke(httpEvent(method, path));
        expect(result, `${method} ${path}`).toMatchObject({
          statusCode: 503,
          body: expect.stringContaining('Customer sign-in is not configured for this deployment'),
        });
      }
    },
  );

  it(
    verifies(
      'aws.customer-identity',
      'loads the console function with CUSTOMER_OIDC_* set: a customer opening a call is sent to the customer sign-in',
    ),
    async () => {
      const invoke = await load('console-customers', {
        CUSTOMER_OIDC_ISSUER: 'https://customers.example.com',
        CUSTOMER_OIDC_CLIENT_ID: 'customer-pages',
      });
      // Neither answer reaches the provider: the call page sends the customer to sign in for it ...
      const call = '/customer/calls/0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55';
      expect(await invoke(httpEvent('GET', call))).toMatchObject({
        statusCode: 303,
        headers: { location: `/customer/sign-in?next=${encodeURIComponent(call)}` },
      });
      // ... and a sign-in that names no call is told to open the link.
      expect(await invoke(httpEvent('GET', '/customer/sign-in'))).toMatchObject({
        statusCode: 400,
        body: expect.stringContaining('open the link the agent gave you'),
      });
    },
  );

  it(
    verifies(
      'aws.approval-resources',
      'loads the held-call steps function, which refuses a task the state machine would never send',
    ),
    async () => {
      const invoke = await load('held-call-steps');
      await expect(invoke({ action: 'launch' })).rejects.toThrow(/The state machine step is invalid/);
    },
  );

  it(
    verifies('aws.stack-shape', 'loads the metadata function, which needs no Cedar, and answers its document'),
    async () => {
      const invoke = await load('resource-metadata');
      const result = await invoke(httpEvent('GET', '/.well-known/oauth-protected-resource/mcp'));
      expect(result).toMatchObject({ statusCode: 200 });
      const body = JSON.parse(String((result as { body?: unknown }).body));
      expect(body).toMatchObject({ resource: 'https://api.example.com/mcp' });
    },
  );

  it(
    verifies(
      'aws.call-tool-authorizer',
      'loads the channel authorizer, which needs no Cedar, and denies a handshake without a token',
    ),
    async () => {
      const invoke = await load('agent-authorizer');
      const methodArn = 'arn:aws:execute-api:eu-west-1:111111111111:abc123/live/$connect';
      const result = await invoke({
        type: 'REQUEST',
        methodArn,
        headers: { Host: 'abc123.execute-api.eu-west-1.amazonaws.com' },
        requestContext: { routeKey: '$connect', eventType: 'CONNECT', connectionId: 'c-1' },
      });
      expect(result).toMatchObject({
        principalId: 'anonymous',
        policyDocument: { Statement: [{ Effect: 'Deny', Resource: methodArn }] },
      });
    },
  );

  it(
    verifies('aws.call-tool-socket', 'loads the channel function with Cedar beside it and accepts a connection'),
    async () => {
      const invoke = await load('call-tool-socket');
      const result = await invoke({
        requestContext: { routeKey: '$connect', eventType: 'CONNECT', connectionId: 'c-1', stage: 'live' },
        isBase64Encoded: false,
      });
      expect(result).toEqual({ statusCode: 200 });
    },
  );

  it(verifies('aws.approval-resources', 'loads the reconciler function with Cedar beside it'), async () => {
    const folder = assets.get('reconciler');
    expect(folder).toBeDefined();
    const module: unknown = await import(pathToFileURL(join(folder ?? '', 'index.mjs')).href);
    expect(isObject(module) && typeof module.handler).toBe('function');
  });
});
