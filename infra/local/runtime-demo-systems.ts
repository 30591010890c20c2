// The demo systems `npm start` runs beside the gateway: the ERP, the call-tool proxy and the MCP
// server. The demo configuration names each through a variable (DEMO_ERP_URL, DEMO_CALL_TOOL_URL,
// DEMO_MCP_URL), so they start before the configuration is read.
import { startDemoCallToolProxy } from '../../examples/call-tool-proxy/server.js';
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

export const startDemoSystems = async (
  options: LocalOptions,
  variables: Readonly<Record<string, string | undefined>>,
  stops: RuntimeStops,
): Promise<DemoSystems> => {
  let named = variables;
  let erpUrl: string | null = null;
  if (options.demoErp) {
    const erp = await startDemoErp({ port: options.erpPort });
    stops.onClose(() => erp.close());
    erpUrl = erp.url;
    named = { ...named, DEMO_ERP_URL: erp.url };
  }
  // The proxy's MCP server starts on first use. On loopback whatever --host says, like the other demo
  // systems: its credential is published in the demo configuration, so only the gateway beside it may
  // call its tools.
  let demoToolsUrl: string | null = null;
  if (options.demoTools) {
    const proxy = await startDemoCallToolProxy({ port: options.demoToolsPort });
    stops.onClose(() => proxy.close());
    demoToolsUrl = proxy.url;
    named = { ...named, DEMO_CALL_TOOL_URL: proxy.url };
  }
  let demoMcpUrl: string | null = null;
  if (options.demoMcp) {
    const reference = await startReferenceMcpServer({ port: options.demoMcpPort });
    stops.onClose(() => reference.close());
    demoMcpUrl = reference.url;
    named = { ...named, DEMO_MCP_URL: reference.url };
  }
  return { variables: named, erpUrl, demoToolsUrl, demoMcpUrl };
};
