// Gateways for the browser tests: `npm start`'s entry point as a process on a copy of the demo
// organization (its configuration edited for the test), calling a demo ERP the test shares, with
// one agent's official MCP client connected; and the agent's view of its calls through it.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { projectPath } from '../../infra/paths.js';
import { ResultObject } from '../../shared/result.js';
import { type RuntimeProcess, startRuntimeProcess } from './runtime-process.js';

export interface DemoGateway {
  readonly runtime: RuntimeProcess;
  /** The agent whose token the gateway was started with. */
  readonly client: Client;
}

export interface DemoGatewayOptions {
  /** A folder of the test's own; the organization and the data go under `<folder>/<name>`. */
  readonly folder: string;
  readonly name: string;
  readonly erpUrl: string;
  /** The agent's bearer token, and its client's name. */
  readonly token: string;
  readonly clientName: string;
  /** The demo configuration's text as the test wants it. */
  readonly configure: (text: string) => string;
}

export const startDemoGateway = async (options: DemoGatewayOptions): Promise<DemoGateway> => {
  const org = join(options.folder, options.name);
  await cp(projectPath('examples'), org, { recursive: true });
  const configFile = join(org, 'gateway.config.yaml');
  await writeFile(configFile, options.configure(await readFile(configFile, 'utf8')));
  const runtime = await startRuntimeProcess(
    ['--data-dir', join(options.folder, `${options.name}-data`), '--no-demo-erp', '--config', configFile],
    { DEMO_ERP_URL: options.erpUrl },
  );
  const client = new Client({ name: options.clientName, version: '1.0.0' });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${options.token}` } },
      }),
    );
  } catch (error) {
    await runtime.stop();
    throw error;
  }
  return { runtime, client };
};

export const stopDemoGateway = async (gateway: DemoGateway): Promise<void> => {
  await gateway.client.close().catch(() => undefined);
  await gateway.runtime.stop();
};

/** A tool's result object, as the agent reads it. */
export const callOn = async (gateway: DemoGateway, name: string, args: Record<string, unknown>) =>
  ResultObject.parse((await gateway.client.callTool({ name, arguments: args })).structuredContent);

export const statusOf = (gateway: DemoGateway, executionId: string) =>
  callOn(gateway, 'get_execution_status', { execution_id: executionId });

/** Reads a call's result object every 100 ms until its status is `status` (a minute at most: a bound for a stuck run) and answers the last one. */
export const untilStatus = async (read: () => Promise<ResultObject>, status: string): Promise<ResultObject> => {
  const deadline = Date.now() + 60_000;
  let last = await read();
  while (last.status !== status && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await read();
  }
  return last;
};

/** Asks the gateway for the call's status until it is `status` (see untilStatus). */
export const statusBecomes = (gateway: DemoGateway, executionId: string, status: string) =>
  untilStatus(() => statusOf(gateway, executionId), status);
