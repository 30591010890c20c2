// The MCP function's first tools/call in a fresh process, as Lambda's cold start pays it: the
// bundle as the stack builds it, imported by a fresh `node` with the function's environment, then
// invoked with an HTTP API (payload 2.0) event carrying the caller the agent authorizer passes. It
// loads the configuration the config table names (pushed by `npm run config:push` to the bucket), builds
// Cedar, reads from the demo ERP and answers. Everything is on loopback: dynalite here stands in
// for DynamoDB (the AWS SDK reaches it through AWS_ENDPOINT_URL_DYNAMODB), and every other AWS
// endpoint but S3's and KMS's (the configuration's stand-ins) points at a closed port, so a call
// that needed Step Functions or EventBridge would fail rather than be answered by a stand-in. It is
// judged against the first-call floor, timed in fresh processes alternated with the function's:
// a minimal handler (cold-start-floor.ts, bundled as a function is) that imports the same clients,
// then makes the requests the function's first call made, to the same stand-ins, and answers.
import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { startDemoErp } from '../examples/erp/server.js';
import { bundleBudget } from '../infra/bundling/budgets.js';
import { ensureTables, type LocalDynamoDb, startLocalDynamoDb } from '../infra/local/dynamodb.js';
import { DynamoDbBundlePointers } from '../shared/adapters/dynamodb/config-store.js';
import { configTable, executionsTable } from '../shared/adapters/dynamodb/tables.js';
import { bundleSignedMessage } from '../shared/control-plane/bundle.js';
import { portOf } from './bed.js';
import { bundleFunctions } from './bundles.js';
import { type FloorPlan, floorPlanFile } from './floor-plan.js';
import { floorRow, overFloorRow } from './floor-ratios.js';
import { type PushedConfiguration, pushDemoConfiguration } from './local-config-push.js';
import type { Measured } from './measured.js';
import type { Plan } from './plan.js';
import { heading, line, type Row, table } from './report.js';
import { median, ms, ratio, rotated } from './stats.js';

const tables = { executions: 'bench-executions', config: 'bench-config' } as const;
/** Where nothing listens: an AWS client sent there fails at once. */
const closedPort = 'http://127.0.0.1:9';
/** The caller the agent authorizer passes on, here the demo's procurement agent by its id. */
const caller = { agentId: 'procurement-agent' } as const;
const apiHost = 'abc123.execute-api.us-east-1.amazonaws.com';
/** Warm calls per kind after the first two, for the handler time per call the cost section uses. */
const warmCalls = 5;
const marker = 'FIRST-CALL ';

/** An API Gateway HTTP API v2 event for a stateless 2026-07-28 tools/call, as the agent authorizer passes it. */
const toolCallEvent = (id: number, name: string, args: Record<string, unknown>) => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  return {
    version: '2.0',
    routeKey: 'POST /mcp',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: {
      host: apiHost,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: 'Bearer (verified by the authorizer)',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
      'x-forwarded-proto': 'https',
    },
    isBase64Encoded: false,
    body,
    requestContext: {
      accountId: '111111111111',
      apiId: 'abc123',
      domainName: apiHost,
      domainPrefix: 'abc123',
      http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'bench' },
      requestId: `bench-${id}`,
      routeKey: 'POST /mcp',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
      authorizer: { lambda: caller },
    },
  };
};

const read = (id: number) => toolCallEvent(id, 'erp.shipments.track', { tracking_number: '1Z999AA10123456784' });
const write = (id: number) =>
  toolCallEvent(id, 'erp.purchase_orders.create', {
    vendor_id: 'V-100',
    amount: '250',
    currency: 'EUR',
    description: 'Printer paper',
  });

/** The probe's events: the first and second reads, then warm reads and writes; the ports it names in its trace. */
const probeEvents = (ports: Readonly<Record<'store' | 'system' | 's3' | 'kms', number>>) => ({
  marker,
  ports,
  reads: Array.from({ length: warmCalls + 2 }, (_, index) => read(index + 1)),
  writes: Array.from({ length: warmCalls }, (_, index) => write(100 + index)),
});

/** A request the first call sent, when it started (ms from the call's start). */
interface Sent {
  readonly ms: number;
  readonly to: string;
  readonly what: string;
}

interface ProbeResult {
  readonly importMs: number;
  readonly firstMs: number;
  readonly secondMs: number;
  readonly readsMs: number[];
  readonly writesMs: number[];
  readonly sent: Sent[];
  /** Whether Node's own fetch implementation was loaded by the end of the first call (it needs none). */
  readonly fetchLoaded: boolean;
  /** From spawning the process to its answer line. */
  readonly wallMs: number;
}

const runChild = (probe: string, events: string, env: NodeJS.ProcessEnv): Promise<ProbeResult> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [probe, events], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let answeredAt = Number.NaN;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (Number.isNaN(answeredAt) && out.includes(marker)) answeredAt = performance.now();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 64 * 1024) err += chunk.toString('utf8');
    });
    // A fresh function that hangs is a result too: it is stopped and reported.
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const answer = out.split('\n').find((text) => text.startsWith(marker));
      if (code !== 0 || answer === undefined) {
        reject(new Error(`the function's process ended ${signal ?? code}: ${(err || out).slice(-800)}`));
        return;
      }
      const parsed = JSON.parse(answer.slice(marker.length)) as Omit<ProbeResult, 'wallMs'>;
      resolve({ ...parsed, wallMs: answeredAt - started });
    });
  });

/** What the deployed MCP function's process sees, its AWS endpoints on loopback. */
const functionEnvironment = (store: LocalDynamoDb, pushed: PushedConfiguration): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: store.credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: store.credentials.secretAccessKey,
  AWS_ENDPOINT_URL_DYNAMODB: store.endpoint,
  AWS_ENDPOINT_URL_KMS: pushed.kmsEndpoint,
  AWS_ENDPOINT_URL_S3: pushed.s3Endpoint,
  AWS_ENDPOINT_URL_SFN: closedPort,
  AWS_ENDPOINT_URL_EVENTBRIDGE: closedPort,
  AWS_CONFIG_FILE: '/dev/null',
  AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
  AWS_LAMBDA_FUNCTION_NAME: 'mcp',
  POWERTOOLS_SERVICE_NAME: 'mcp',
  POWERTOOLS_LOG_LEVEL: 'WARN',
  NODE_OPTIONS: '--enable-source-maps',
  EXECUTIONS_TABLE: tables.executions,
  CONFIG_TABLE: tables.config,
  CONFIG_BUCKET: pushed.bucket,
  CONFIG_SIGNING_KEY_ID: pushed.signingKeyArn,
  DATA_KEY_ID: 'alias/approval-gateway',
  STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:111111111111:stateMachine:approvals',
});

/** The probe copied beside a bundle's entry module, which it imports as `./index.mjs`; its path. */
const probeBeside = async (entry: string): Promise<string> => {
  const probe = join(dirname(entry), 'first-call-probe.mjs');
  await copyFile(fileURLToPath(new URL('./first-call-probe.mjs', import.meta.url)), probe);
  return probe;
};

/** The two kinds of fresh process timed, alternated round by round. */
const sides = ['function', 'floor'] as const;
type Side = (typeof sides)[number];

/** The store, the ERP, the pushed configuration, the MCP bundle and the floor's with the probe beside each; each leaves its closer. */
const prepareProbe = async (closers: (() => Promise<unknown>)[], folder: string) => {
  const store = await startLocalDynamoDb({ dataPath: null });
  closers.push(() => store.close());
  await ensureTables(store.client, [
    { definition: executionsTable, tableName: tables.executions },
    { definition: configTable, tableName: tables.config },
  ]);
  const erp = await startDemoErp({ port: 0 });
  closers.push(() => erp.close());
  // The pushed configuration names the demo's systems; the call reaches the ERP only.
  const pushed = await pushDemoConfiguration(store, tables.config, folder, {
    DEMO_ERP_URL: erp.url,
    DEMO_CALL_TOOL_URL: `${closedPort}/tool/call-tool`,
  });
  closers.push(() => pushed.close());
  line(pushed.output);
  const workspace = await bundleFunctions();
  closers.push(() => workspace.remove());
  const mcp = workspace.bundles.find((bundle) => bundle.name === 'mcp');
  if (mcp === undefined) throw new Error('no mcp bundle');
  const probes: Record<Side, string> = {
    function: await probeBeside(mcp.file),
    floor: await probeBeside(workspace.floor),
  };
  const events = join(folder, 'events.json');
  const ports = {
    store: portOf(store.endpoint),
    system: erp.port,
    s3: portOf(pushed.s3Endpoint),
    kms: portOf(pushed.kmsEndpoint),
  };
  await writeFile(events, JSON.stringify(probeEvents(ports)));
  const floorPlan = join(dirname(workspace.floor), floorPlanFile);
  return { probes, floorPlan, events, env: functionEnvironment(store, pushed), erp, store };
};
type Prepared = Awaited<ReturnType<typeof prepareProbe>>;

/** Headers the connection sets, not the call: node's client sets its own. */
const connectionHeaders: ReadonlySet<string> = new Set(['host', 'connection', 'content-length', 'transfer-encoding']);

/**
 * What the floor sends, read from what the function's process just sent: its first system call as
 * the ERP received it, the record it wrote for a read, and the message the configuration's
 * signature is over.
 */
const floorPlanFrom = async ({ store, erp }: Pick<Prepared, 'store' | 'erp'>): Promise<FloorPlan> => {
  const call = erp.calls()[0];
  const { Items } = await store.documents.send(new ScanCommand({ TableName: tables.executions }));
  const record = Items?.find((item) => item.tool === 'erp.shipments.track');
  const deployed = await new DynamoDbBundlePointers(store.documents, tables.config).read();
  if (call === undefined || record === undefined || deployed?.kind !== 'signed') {
    throw new Error("the function's first call left no system call, record or signed configuration to repeat");
  }
  return {
    systemUrl: new URL(call.path, erp.url).href,
    systemHeaders: Object.fromEntries(Object.entries(call.headers).filter(([name]) => !connectionHeaders.has(name))),
    signedMessage: Buffer.from(bundleSignedMessage(deployed.pointer)).toString('base64'),
    record,
  };
};

/**
 * The fresh processes, the function's and the floor's alternated (each round the other first); the
 * first round starts with the function, whose requests the floor's plan is read from.
 */
const runAlternated = async (prepared: Prepared, plan: Plan): Promise<Record<Side, ProbeResult[]>> => {
  const runs: Record<Side, ProbeResult[]> = { function: [], floor: [] };
  let planned = false;
  for (let run = 0; run < plan.firstCallRuns; run += 1) {
    for (const side of rotated(sides, run)) {
      runs[side].push(await runChild(prepared.probes[side], prepared.events, prepared.env));
      if (!planned) {
        await writeFile(prepared.floorPlan, JSON.stringify(await floorPlanFrom(prepared)));
        planned = true;
      }
      prepared.erp.reset();
    }
  }
  return runs;
};

/** The medians of each side's runs, as a table; the import and the first call's. */
const printTimes = (runs: Readonly<Record<Side, readonly ProbeResult[]>>) => {
  const of = (side: Side, pick: (run: ProbeResult) => number) => median(runs[side].map(pick));
  const both = (label: string, pick: (run: ProbeResult) => number, digits: number) => [
    label,
    ms(of('function', pick), digits),
    ms(of('floor', pick), digits),
  ];
  const cold = (run: ProbeResult) => run.importMs + run.firstMs;
  const coldMs = of('function', cold);
  const floorMs = of('floor', cold);
  const readMs = median(runs.function.flatMap((run) => run.readsMs));
  const writeMs = median(runs.function.flatMap((run) => run.writesMs));
  table([
    ['', 'MCP function', 'floor'],
    both('import of the bundle', (run) => run.importMs, 0),
    both('first tools/call (the function: configuration, Cedar, the read)', (run) => run.firstMs, 0),
    [...both('import + first call', cold, 0), `${ratio(coldMs / floorMs)} the floor`],
    both('second tools/call (the same read)', (run) => run.secondMs, 1),
    [`warm direct read (${warmCalls} per process)`, ms(readMs, 1), '-'],
    [`warm direct write (${warmCalls} per process)`, ms(writeMs, 1), '-'],
    both('process spawn → first answer (wall)', (run) => run.wallMs, 0),
  ]);
  return { firstMs: of('function', (run) => run.firstMs), coldMs, floorMs, readMs, writeMs };
};

const requestsOf = (run: ProbeResult | undefined): string =>
  run?.sent.map((sent) => `${sent.to} ${sent.what} @${sent.ms.toFixed(0)}`).join(', ') ?? '';

/**
 * The first call split at the requests it sent: until the configuration is read, from there to the
 * system call (parsing it, building Cedar, deciding), and the system call to the answer; the
 * floor's requests beside them.
 */
const printFirstCall = (runs: Readonly<Record<Side, readonly ProbeResult[]>>, firstMs: number, plan: Plan): void => {
  const of = (pick: (run: ProbeResult) => number) => median(runs.function.map(pick));
  const sentAt = (run: ProbeResult, pick: (sent: Sent) => boolean) => run.sent.find(pick)?.ms ?? Number.NaN;
  const configRead = of((run) => sentAt(run, (sent) => sent.to === 'store'));
  const systemCall = of((run) => sentAt(run, (sent) => sent.to === 'system'));
  line(
    `the first call by what it sent: first store request (the configuration) at ${ms(configRead, 0)}, ` +
      `the system call at ${ms(systemCall, 0)}, answered at ${ms(firstMs, 0)}`,
  );
  line(`its requests (first run): ${requestsOf(runs.function[0])}`);
  line(`the floor's (first run): ${requestsOf(runs.floor[0])}`);
  const loadedFetch = runs.function.filter((run) => run.fetchLoaded).length;
  line(
    `Node's own fetch implementation loaded by the first call: ${loadedFetch === 0 ? 'in no process' : `in ${loadedFetch} of ${runs.function.length} processes (a plain call needs none of it: a lazy web global was read)`}`,
  );
  line(
    `${plan.firstCallRuns} fresh node processes each, the function's and the floor's alternated, with the function's ` +
      'environment (NODE_OPTIONS=--enable-source-maps); erp.shipments.track for procurement-agent, a direct read',
  );
  line(
    'configuration from the config table pointer and the bundles bucket (dynalite, S3 and KMS stand-ins on loopback), pushed by npm run config:push',
  );
  line(
    "floor: a minimal handler bundled as the function is (bench/cold-start-floor.ts): the DynamoDB clients and Powertools Logger and Metrics made at import, S3's and KMS's clients loaded on first use, then the function's requests repeated (the pointer, the object, kms:Verify, the system call, the record's PutItem) and an answer",
  );
};

/** The summary's rows of this section (bench/run.ts says them too when it could not run). */
export const firstCallFloorWhat = 'first-call floor: a minimal handler, the same clients and requests, import + call';
export const firstCallWhat =
  'MCP function: first tools/call in a fresh process (import, configuration, Cedar, the call)';

export const firstCall = async (plan: Plan, measured: Measured): Promise<Row[]> => {
  heading('MCP function: first tools/call in a fresh process (import, configuration, Cedar, the call)');
  const folder = await mkdtemp(join(tmpdir(), 'gateway-bench-first-call-'));
  const closers: (() => Promise<unknown>)[] = [() => rm(folder, { recursive: true, force: true })];
  try {
    const runs = await runAlternated(await prepareProbe(closers, folder), plan);
    const { firstMs, coldMs, floorMs, readMs, writeMs } = printTimes(runs);
    printFirstCall(runs, firstMs, plan);
    measured.handlerMs.directRead = readMs;
    measured.handlerMs.directWrite = writeMs;
    return [
      floorRow(firstCallFloorWhat, ms(floorMs, 0)),
      overFloorRow(firstCallWhat, { measuredMs: coldMs, floorMs }, bundleBudget.firstCallOverFloor),
    ];
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
};
