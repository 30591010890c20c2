// The bench bed: everything the measurements drive, in this process on loopback. The demo ERP;
// the local runtime (its store, its Step Functions endpoint, the handler modules Lambda runs) with
// the demo configuration; the reference servers (minimal with the same store, minimal without a
// store, the MCP SDK's stateless server); the load generator's thread; and the wire watch on the
// store's and the ERP's ports.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Pool } from 'undici';
import { type DemoErp, demoErpApiKey, startDemoErp } from '../examples/erp/server.js';
import { documentClient, ensureTables, localAwsClientConfig } from '../infra/local/dynamodb.js';
import type { LocalRuntime } from '../infra/local/runtime.js';
import { executionsTable } from '../shared/adapters/dynamodb/tables.js';
import { ResultObject } from '../shared/result.js';
import { startExpiringRuntime, startRuntime, unlimitedDemo } from './demo-runtime.js';
import { LoadClient, type Target } from './load.js';
import { type MinimalServer, startMinimalServer } from './minimal-server.js';
import { type SdkServer, startSdkServer } from './sdk-server.js';
import { WireWatch } from './wire-watch.js';

const agentToken = 'demo-procurement-token';
export const approver = { id: 'finance-approver', password: 'demo-finance-password' } as const;
const toolName = 'erp.purchase_orders.create';
/** Below 1000 the demo policy runs a purchase order at once; from 1000 up finance approves first. */
export const directAmount = '250';
export const heldAmount = '1500';

const minimalTable = 'bench-minimal-executions';

/** A stateless 2026-07-28 tools/call: the per-request envelope in _meta and the headers it requires. */
const toolCallOf = (
  name: string,
  args: Record<string, unknown>,
): { body: string; headers: Record<string, string> } => ({
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  }),
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${agentToken}`,
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': name,
  },
});

export const toolCall = (amount: string, description = 'Printer paper') =>
  toolCallOf(toolName, { vendor_id: 'V-100', amount, currency: 'EUR', description });

/** A direct read: procurement and support track shipments at once. */
const readCall = () => toolCallOf('erp.shipments.track', { tracking_number: '1Z999AA10123456784' });

const target = (name: string, description: string, origin: string, amount: string, expect: string): Target => ({
  name,
  description,
  origin,
  path: '/mcp',
  ...toolCall(amount),
  expect,
});

/** The result object of a tools/call answer. */
const resultOf = (text: string): ResultObject => {
  const answer: unknown = JSON.parse(text);
  const structured =
    typeof answer === 'object' && answer !== null && 'result' in answer && typeof answer.result === 'object'
      ? (answer.result as { structuredContent?: unknown }).structuredContent
      : undefined;
  return ResultObject.parse(structured);
};

/** The bed's direct call (a purchase order of 250, run at once) to another gateway at this origin. */
export const directCallTarget = (name: string, description: string, origin: string): Target =>
  target(name, description, origin, directAmount, '"status":"succeeded"');

/** Where each held call's description carries its own number (load.ts's Target.numbered). */
const callNumber = '~~~~~~~~';
/** The description of the held calls a load numbers, as one of them (numbered 0) reads. */
export const numberedDescription = `Printer paper ${'0'.repeat(callNumber.length)}`;

/**
 * The bed's held call (a purchase order of 1500, held for finance) to a server at this origin, each
 * one for another order: the same call asked for again while the first waits would join it, not be held.
 */
export const heldCallTarget = (name: string, description: string, origin: string): Target => ({
  name,
  description,
  origin,
  path: '/mcp',
  ...toolCall(heldAmount, numberedDescription.replace(/0+$/, callNumber)),
  expect: '"status":"pending_approval"',
  numbered: callNumber,
});

export const portOf = (url: string): number => Number(new URL(url).port);

/** Polls `read` until `done` holds (bounded); answers the last value read. */
export const waitFor = async <T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 2,
): Promise<T> => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`gave up waiting after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
};

export interface Bed {
  readonly erp: DemoErp;
  readonly runtime: LocalRuntime;
  readonly watch: WireWatch;
  readonly load: LoadClient;
  readonly targets: {
    readonly gateway: Target;
    readonly minimal: Target;
    readonly sdk: Target;
    readonly bare: Target;
    readonly held: Target;
    /** A direct read (erp.shipments.track) on the bed's runtime. */
    readonly read: Target;
  };
  /** One tools/call to a gateway (the bed's runtime unless told), untimed: its result object. */
  call(amount: string, baseUrl?: string, description?: string): Promise<ResultObject>;
  /** Starts a second runtime whose held calls expire after one second (same ERP). */
  startExpiringRuntime(): Promise<{ runtime: LocalRuntime; stop(): Promise<void> }>;
  close(): Promise<void>;
}

/** One request of `target` (its own body unless told), untimed: the result object of its answer. */
export const callOnce = async (
  target: Pick<Target, 'origin' | 'path' | 'headers' | 'body'>,
  body = target.body,
): Promise<ResultObject> => {
  const agent = new Pool(target.origin, { connections: 1 });
  try {
    const response = await agent.request({ path: target.path, method: 'POST', headers: target.headers, body });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`tools/call answered ${response.statusCode}: ${text}`);
    return resultOf(text);
  } finally {
    await agent.close();
  }
};

/** One tools/call to a gateway (at `defaultBaseUrl` unless told), untimed: its result object. */
export const callerOf =
  (defaultBaseUrl: string) =>
  (amount: string, baseUrl = defaultBaseUrl, description?: string): Promise<ResultObject> =>
    callOnce({ origin: baseUrl, path: '/mcp', ...toolCall(amount, description) });

interface ReferenceServers {
  readonly minimal: MinimalServer;
  readonly bare: MinimalServer;
  readonly sdk: SdkServer;
}

/**
 * The reference servers; each started leaves its closer in `closers`. The minimal server writes
 * items shaped like the gateway's own (its first direct call's record), to a table of the same
 * definition in the same store.
 */
const startReferenceServers = async (
  closers: (() => Promise<void>)[],
  erp: DemoErp,
  runtime: LocalRuntime,
  call: (amount: string) => Promise<ResultObject>,
): Promise<ReferenceServers> => {
  const first = await call(directAmount);
  const template = first.execution_id === null ? undefined : await runtime.store.get(first.execution_id);
  if (first.status !== 'succeeded' || template === undefined) {
    throw new Error(`the gateway's first direct call ended ${first.status} ${first.code ?? ''}`);
  }
  const storeClient = new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials));
  closers.push(async () => storeClient.destroy());
  await ensureTables(storeClient, [{ definition: executionsTable, tableName: minimalTable }]);
  const system = runtime.config().systems.find((candidate) => candidate.key === 'erp');
  const minimal: MinimalServer = await startMinimalServer({
    erpUrl: erp.url,
    erpApiKey: demoErpApiKey,
    deadlineMs: system?.timeout ?? 10_000,
    store: { documents: documentClient(storeClient), tableName: minimalTable, template },
  });
  closers.push(() => minimal.close());
  const bare = await startMinimalServer({
    erpUrl: erp.url,
    erpApiKey: demoErpApiKey,
    deadlineMs: system?.timeout ?? 10_000,
    store: null,
  });
  closers.push(() => bare.close());
  const sdk: SdkServer = await startSdkServer({ erpUrl: erp.url, erpApiKey: demoErpApiKey });
  closers.push(() => sdk.close());
  return { minimal, bare, sdk };
};

/** What the measurements drive: the gateway's direct, held and read calls, and the references'. */
const bedTargets = (runtime: LocalRuntime, references: ReferenceServers): Bed['targets'] => {
  const succeeded = '"status":"succeeded"';
  const { minimal, sdk, bare } = references;
  return {
    gateway: target(
      'gateway',
      'the local runtime: HTTP front, MCP SDK, policy, two store writes, system call',
      runtime.baseUrl,
      directAmount,
      succeeded,
    ),
    minimal: target(
      'minimal',
      'the same system call and the same two store writes, nothing else',
      minimal.url,
      directAmount,
      succeeded,
    ),
    sdk: target(
      'SDK',
      'the MCP SDK stateless server and the same system call, no store',
      sdk.url,
      directAmount,
      succeeded,
    ),
    bare: target('bare', 'the same system call only', bare.url, directAmount, succeeded),
    held: heldCallTarget('gateway (held)', 'the local runtime holding the call for approval', runtime.baseUrl),
    read: {
      name: 'gateway (read)',
      description: 'the local runtime: a direct read, erp.shipments.track',
      origin: runtime.baseUrl,
      path: '/mcp',
      ...readCall(),
      expect: succeeded,
    },
  };
};

export const startBed = async (): Promise<Bed> => {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer().catch(() => undefined);
  };
  try {
    const erp = await startDemoErp({ port: 0 });
    closers.push(() => erp.close());
    const org = await unlimitedDemo();
    closers.push(org.remove);
    const runtime = await startRuntime(org.config, erp.url);
    closers.push(() => runtime.stop());
    const watch = new WireWatch(portOf(runtime.dynamodbEndpoint), erp.port);
    closers.push(async () => watch.close());
    const call = callerOf(runtime.baseUrl);
    const references = await startReferenceServers(closers, erp, runtime, call);
    const load = new LoadClient();
    closers.push(() => load.close());
    return {
      erp,
      runtime,
      watch,
      load,
      targets: bedTargets(runtime, references),
      call,
      startExpiringRuntime: () => startExpiringRuntime(erp.url),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
};
