// The MCP function's first tools/call in a fresh process, as Lambda's cold start pays it: the
// bundle as the stack builds it, imported by a fresh `node` with the function's environment, then
// invoked with an HTTP API (payload 2.0) event carrying the caller the agent authorizer passes. It
// loads the configuration the config table names (pushed by `npm run config:push` to the bucket), builds
// Cedar, reads from the demo ERP and answers. Everything is on loopback: dynalite here stands in
// for DynamoDB (the AWS SDK reaches it through AWS_ENDPOINT_URL_DYNAMODB), and every other AWS
// endpoint points at a closed port, so a call that needed KMS, Step Functions or EventBridge
// would fail rather than be answered by a stand-in.
import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startDemoErp } from '../examples/erp/server.js';
import { ensureTables, type LocalDynamoDb, startLocalDynamoDb } from '../infra/local/dynamodb.js';
import { configTable, executionsTable } from '../shared/adapters/dynamodb/tables.js';
import { portOf } from './bed.js';
import { bundleFunctions } from './bundles.js';
import { type PushedConfiguration, pushDemoConfiguration } from './local-config-push.js';
import type { Measured } from './measured.js';
import type { Plan } from './plan.js';
import { heading, line, type Row, table, within } from './report.js';
import { median, ms } from './stats.js';

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

/** The probe's events: the first and second reads, then warm reads and writes. */
const probeEvents = (storePort: number, systemPort: number) => ({
  marker,
  storePort,
  systemPort,
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

/** The store, the ERP, the pushed configuration, the MCP bundle with the probe beside it; each leaves its closer. */
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
  const probe = join(dirname(mcp.file), 'first-call-probe.mjs');
  await copyFile(fileURLToPath(new URL('./first-call-probe.mjs', import.meta.url)), probe);
  const events = join(folder, 'events.json');
  await writeFile(events, JSON.stringify(probeEvents(portOf(store.endpoint), erp.port)));
  return { probe, events, env: functionEnvironment(store, pushed), erp };
};

/** The medians of the runs, as a table; the import and the first call's. */
const printTimes = (runs: readonly ProbeResult[]) => {
  const of = (pick: (run: ProbeResult) => number) => median(runs.map(pick));
  const importMs = of((run) => run.importMs);
  const firstMs = of((run) => run.firstMs);
  const coldMs = of((run) => run.importMs + run.firstMs);
  const readMs = median(runs.flatMap((run) => run.readsMs));
  const writeMs = median(runs.flatMap((run) => run.writesMs));
  table([
    ['', 'median'],
    ['import of the bundle', ms(importMs, 0)],
    ['first tools/call (configuration, Cedar, the read)', ms(firstMs, 0)],
    ['import + first call', ms(coldMs, 0)],
    [
      'second tools/call (the same read)',
      ms(
        of((run) => run.secondMs),
        1,
      ),
    ],
    [`warm direct read (${warmCalls} per process)`, ms(readMs, 1)],
    [`warm direct write (${warmCalls} per process)`, ms(writeMs, 1)],
    [
      'process spawn → first answer (wall)',
      ms(
        of((run) => run.wallMs),
        0,
      ),
    ],
  ]);
  return { importMs, firstMs, coldMs, readMs, writeMs };
};

/**
 * The first call split at the requests it sent: until the configuration is read, from there to the
 * system call (parsing it, building Cedar, deciding), and the system call to the answer.
 */
const printFirstCall = (runs: readonly ProbeResult[], firstMs: number, plan: Plan): void => {
  const of = (pick: (run: ProbeResult) => number) => median(runs.map(pick));
  const sentAt = (run: ProbeResult, pick: (sent: Sent) => boolean) => run.sent.find(pick)?.ms ?? Number.NaN;
  const configRead = of((run) => sentAt(run, (sent) => sent.to === 'store'));
  const systemCall = of((run) => sentAt(run, (sent) => sent.to === 'system'));
  line(
    `the first call by what it sent: first store request (the configuration) at ${ms(configRead, 0)}, ` +
      `the system call at ${ms(systemCall, 0)}, answered at ${ms(firstMs, 0)}`,
  );
  line(
    `its requests (first run): ${runs[0]?.sent.map((sent) => `${sent.to} ${sent.what} @${sent.ms.toFixed(0)}`).join(', ') ?? ''}`,
  );
  const loadedFetch = runs.filter((run) => run.fetchLoaded).length;
  line(
    `Node's own fetch implementation loaded by the first call: ${loadedFetch === 0 ? 'in no process' : `in ${loadedFetch} of ${runs.length} processes (a plain call needs none of it: a lazy web global was read)`}`,
  );
  line(
    `${plan.firstCallRuns} fresh node processes with the function's environment (NODE_OPTIONS=--enable-source-maps); ` +
      'erp.shipments.track for procurement-agent, a direct read',
  );
  line(
    'configuration from the config table pointer and the bundles bucket (dynalite, S3 and KMS stand-ins on loopback), pushed by npm run config:push',
  );
};

export const firstCall = async (plan: Plan, measured: Measured): Promise<Row[]> => {
  heading('MCP function: first tools/call in a fresh process (import, configuration, Cedar, the call)');
  const folder = await mkdtemp(join(tmpdir(), 'gateway-bench-first-call-'));
  const closers: (() => Promise<unknown>)[] = [() => rm(folder, { recursive: true, force: true })];
  try {
    const { probe, events, env, erp } = await prepareProbe(closers, folder);
    const runs: ProbeResult[] = [];
    for (let run = 0; run < plan.firstCallRuns; run += 1) {
      runs.push(await runChild(probe, events, env));
      erp.reset();
    }
    const { importMs, firstMs, coldMs, readMs, writeMs } = printTimes(runs);
    printFirstCall(runs, firstMs, plan);
    measured.handlerMs.directRead = readMs;
    measured.handlerMs.directWrite = writeMs;
    return [
      {
        what: 'MCP function: first tools/call in a fresh process (import, configuration, Cedar, the call)',
        measured: `${ms(coldMs, 0)} (medians: import ${ms(importMs, 0)}, call ${ms(firstMs, 0)})`,
        target: '≤ 250 ms',
        mark: within(coldMs <= 250),
      },
    ];
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
};
