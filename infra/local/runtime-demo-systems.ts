// The demo systems `npm start` runs beside the gateway: the ERP, the call-tool proxy and the MCP
// server. The demo configuration names each through a variable (DEMO_ERP_URL, DEMO_CALL_TOOL_URL,
// DEMO_MCP_URL), so they start before the configuration is read. The ERP checks approval receipts
// against the gateway's keys, fetched once the gateway listens.
import { startDemoCallToolProxy } from '../../examples/call-tool-proxy/server.js';
import type { ReceiptGateway } from '../../examples/erp/receipt-check.js';
import { startDemoErp } from '../../examples/erp/server.js';
import { startReferenceMcpServer } from '../../examples/reference-mcp/server.js';
import type { LocalOptions } from './options.js';
import type { RuntimeStops } from './runtime-lifecycle.js';

export interface DemoSystems {
  /** The run's variables, with the address of each demo system that runs. */
  readonly variables: Readonly<Record<string, string | undefined>>;
  readonly erpUrl: string | null;
  readonly demoToolsUrl: string | null;
  readonly demoMcpUrl: string | null;
}

/** Starts one demo system if asked for, to close at the stop; its address, or null. */
const started = async (
  wanted: boolean,
  start: () => Promise<{ readonly url: string; close(): Promise<void> }>,
  stops: RuntimeStops,
): Promise<string | null> => {
  if (!wanted) return null;
  const system = await start();
  stops.onClose(() => system.close());
  return system.url;
};

export const startDemoSystems = async (
  options: LocalOptions,
  variables: Readonly<Record<string, string | undefined>>,
  stops: RuntimeStops,
  gateway: () => ReceiptGateway | null,
): Promise<DemoSystems> => {
  const erpUrl = await started(
    options.demoErp,
    () => startDemoErp({ port: options.erpPort, receipts: { gateway } }),
    stops,
  );
  // The proxy's MCP server starts on first use. On loopback whatever --host says, like the other demo
  // systems: its credential is published in the demo configuration, so only the gateway beside it may
  // call its tools.
  const demoToolsUrl = await started(
    options.demoTools,
    () => startDemoCallToolProxy({ port: options.demoToolsPort }),
    stops,
  );
  const demoMcpUrl = await started(
    options.demoMcp,
    () => startReferenceMcpServer({ port: options.demoMcpPort }),
    stops,
  );
  return {
    variables: {
      ...variables,
      ...(erpUrl === null ? {} : { DEMO_ERP_URL: erpUrl }),
      ...(demoToolsUrl === null ? {} : { DEMO_CALL_TOOL_URL: demoToolsUrl }),
      ...(demoMcpUrl === null ? {} : { DEMO_MCP_URL: demoMcpUrl }),
    },
    erpUrl,
    demoToolsUrl,
    demoMcpUrl,
  };
};
