// A clean stop (SIGTERM, Ctrl-C) of `npm start`'s entry point as a real process: new requests are
// refused at once, a call already sent to its system gets its answer and its outcome recorded,
// and the next start finds it settled (never `unknown`), with the system called once; a signal to
// `npm start`'s whole process group, under load, is one clean stop.
import { cp } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localTableNames, startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { type Listening, listen } from '../../infra/local/net.js';
import { projectPath } from '../../infra/paths.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { ResultObject } from '../../shared/result.js';
import { approvers } from '../support/approval-org.js';
import { signedIn } from '../support/console.js';
import { quietLog } from '../support/logs.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

/** A loopback system that holds every call until the test releases it. */
interface HeldSystem extends Listening<import('node:http').Server> {
  readonly url: string;
  /** Execution ids (x-request-id) of the calls received, in order. */
  readonly calls: string[];
  /** Resolves once `count` calls have arrived. */
  arrived(count: number): Promise<void>;
  /** Answers every held call (and every later one) with a placed order. */
  release(): void;
  /** Forgets the calls received, and holds the next ones again. */
  reset(): void;
}

const startHeldSystem = async (): Promise<HeldSystem> => {
  const calls: string[] = [];
  const held: ServerResponse[] = [];
  const arrivals: { count: number; resolve: () => void }[] = [];
  let released = false;
  const answer = (response: ServerResponse) =>
    response
      .writeHead(201, { 'content-type': 'application/json' })
      .end(JSON.stringify({ id: `PO-${calls.length}`, status: 'placed' }));
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      calls.push(String(request.headers['x-request-id']));
      for (const waiter of arrivals.filter((candidate) => calls.length >= candidate.count)) waiter.resolve();
      if (released) answer(response);
      else held.push(response);
    });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    ...listening,
    url: `http://127.0.0.1:${listening.port}`,
    calls,
    arrived: (count) =>
      calls.length >= count ? Promise.resolve() : new Promise((resolve) => arrivals.push({ count, resolve })),
    release: () => {
      released = true;
      for (const response of held.splice(0)) answer(response);
    },
    reset: () => {
      released = false;
      calls.length = 0;
      arrivals.length = 0;
    },
  };
};

/** Resolves when the process has printed text matching `pattern`. */
const printed = (runtime: RuntimeProcess, pattern: RegExp): Promise<void> =>
  new Promise((resolve) => {
    const check = () => {
      if (!pattern.test(runtime.output())) return;
      runtime.child.stdout?.off('data', check);
      resolve();
    };
    runtime.child.stdout?.on('data', check);
    check();
  });

/** A request on a connection of its own, as a new client would open one. */
const freshRequest = (url: string): Promise<{ status: number; headers: IncomingMessage['headers'] }> =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const outgoing = httpRequest(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${demoTokens.procurement}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });

const statusOf = async (client: Client, executionId: string) =>
  ResultObject.parse(
    (await client.callTool({ name: 'get_execution_status', arguments: { execution_id: executionId } }))
      .structuredContent,
  );

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let configFile: string;
let system: HeldSystem;

beforeAll(async () => {
  folder = await temporaryFolder('gateway-clean-stop-');
  await cp(projectPath('examples'), join(folder.path, 'org'), { recursive: true });
  configFile = join(folder.path, 'org', 'gateway.config.yaml');
});
afterAll(async () => {
  await folder?.remove();
});

const startGateway = (dataDir: string) =>
  startRuntimeProcess(['--data-dir', dataDir, '--no-demo-erp', '--config', configFile], { DEMO_ERP_URL: system.url });

const order = (amount: string) => ({ vendor_id: 'V-100', amount, currency: 'EUR', description: 'Printer paper' });

describe('a clean stop while a call is with its system', () => {
  beforeAll(async () => {
    system = await startHeldSystem();
  });
  afterAll(async () => {
    system.release();
    await system?.close();
  });

  it(verifies(
    'local.clean-stop',
    'lets a direct write finish: refuses new requests, answers the caller, records succeeded, exits 0',
  ), async () => {
    system.reset();
    const dataDir = join(folder.path, 'direct');
    const runtime = await startGateway(dataDir);
    const client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
    const answer = client.callTool({ name: 'erp.purchase_orders.create', arguments: order('250.00') });
    await system.arrived(1);

    const exited = runtime.stop('SIGTERM');
    await printed(runtime, /SIGTERM received, stopping/);
    const refused = await freshRequest(runtime.mcpUrl);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('10');
    expect(refused.headers.connection).toBe('close');

    system.release();
    const result = ResultObject.parse((await answer).structuredContent);
    expect(result).toMatchObject({ status: 'succeeded', result: { status: 'placed' } });
    await client.close();
    const stopped = await exited;
    expect(stopped.code, stopped.output).toBe(0);
    expect(stopped.output).toContain('Stopped.');

    const revived = await startGateway(dataDir);
    try {
      const status = await connectAgent(revived.mcpUrl, demoTokens.procurement);
      expect(await statusOf(status, result.execution_id ?? '')).toMatchObject({
        status: 'succeeded',
        result: { status: 'placed' },
      });
      await status.close();
      expect(system.calls).toEqual([result.execution_id]);
    } finally {
      await revived.stop();
    }
  }, 120_000);

  it(verifies(
    'local.clean-stop',
    'stops at once on a further signal (a copy of the first within a second counts once), without waiting for the call in flight',
  ), async () => {
    system.reset();
    const runtime = await startGateway(join(folder.path, 'forced'));
    const client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
    const answer = client.callTool({ name: 'erp.purchase_orders.create', arguments: order('250.00') });
    void answer.catch(() => undefined);
    await system.arrived(1);
    const exited = runtime.stop('SIGINT');
    await printed(runtime, /SIGINT received, stopping/);
    // A copy of the first signal within a second is the same request: a further one forces.
    runtime.child.kill('SIGINT');
    await printed(runtime, /SIGINT received again/);
    if (!runtime.output().includes('stopping at once')) runtime.child.kill('SIGINT');
    const forced = await exited;
    expect(forced.code, forced.output).toBe(1);
    expect(forced.output).toContain('SIGINT received again: stopping at once.');
    await expect(answer).rejects.toThrow();
    system.release();
  }, 120_000);

  it(verifies(
    'local.clean-stop',
    'lets an approved call being sent finish, and leaves a waiting call for the next start',
  ), async () => {
    system.reset();
    const dataDir = join(folder.path, 'approved');
    const runtime = await startGateway(dataDir);
    const client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
    const held = async (amount: string) => {
      const answer = await client.callTool({ name: 'erp.purchase_orders.create', arguments: order(amount) });
      const result = ResultObject.parse(answer.structuredContent);
      expect(result.status).toBe('pending_approval');
      return result.execution_id ?? '';
    };
    const approved = await held('1500');
    const waiting = await held('1600');
    const finance = await signedIn(runtime.baseUrl, approvers.finance.id, approvers.finance.password);
    const decided = await finance.decide(approved, await finance.decisionForm(approved), 'approve');
    expect(decided.status).toBe(303);
    await system.arrived(1);
    await client.close();

    const exited = runtime.stop('SIGTERM');
    await printed(runtime, /SIGTERM received, stopping/);
    expect((await freshRequest(runtime.mcpUrl)).status).toBe(503);
    system.release();
    const stopped = await exited;
    expect(stopped.code, stopped.output).toBe(0);

    const revived = await startGateway(dataDir);
    try {
      const status = await connectAgent(revived.mcpUrl, demoTokens.procurement);
      expect(await statusOf(status, approved)).toMatchObject({ status: 'succeeded', result: { status: 'placed' } });
      expect(await statusOf(status, waiting)).toMatchObject({ status: 'pending_approval' });
      await status.close();
      expect(system.calls).toEqual([approved]);
    } finally {
      await revived.stop();
    }
  }, 120_000);
});

describe('a stop signal sent to the process group of npm start', () => {
  beforeAll(async () => {
    system = await startHeldSystem();
    system.release();
  });
  afterAll(async () => {
    await system?.close();
  });

  it(verifies(
    'local.group-stop-once',
    'stops cleanly under load: every call sent ends succeeded, none left open to become unknown',
  ), async () => {
    const dataDir = join(folder.path, 'group');
    const runtime = await startRuntimeProcess(
      ['--data-dir', dataDir, '--no-demo-erp', '--config', configFile],
      { DEMO_ERP_URL: system.url },
      { npmStart: true },
    );
    const agents = await Promise.all([1, 2, 3, 4].map(() => connectAgent(runtime.mcpUrl, demoTokens.procurement)));
    let stopping = false;
    const loops = agents.map(async (client) => {
      while (!stopping) {
        await client.callTool({ name: 'erp.purchase_orders.create', arguments: order('25.00') }).catch(() => undefined);
      }
    });
    // Calls are running on every connection when the group is signalled, as a service manager does.
    await system.arrived(12);
    const exited = runtime.stop('SIGTERM');
    stopping = true;
    await Promise.all(loops);
    await Promise.all(agents.map((client) => client.close().catch(() => undefined)));
    const stopped = await exited;
    expect(stopped.output).toContain('SIGTERM received, stopping');
    expect(stopped.output).not.toContain('stopping at once');
    expect(stopped.output).toContain('Stopped.');

    const store = await startLocalDynamoDb({ dataPath: join(dataDir, 'dynamodb') });
    try {
      const executions = new DynamoDbExecutionStore(store.documents, localTableNames.executions, quietLog);
      expect((await executions.scanOpen()).items).toEqual([]);
      const ended = await Promise.all(system.calls.map(async (id) => (await executions.get(id))?.status));
      expect(ended.length).toBeGreaterThanOrEqual(12);
      expect(new Set(ended)).toEqual(new Set(['succeeded']));
    } finally {
      await store.close();
    }
  }, 120_000);
});
