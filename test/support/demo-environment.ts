// Addresses for every ${env:…} the demo configuration reads, for tests that load it without running
// its systems: nothing listens there, so a call that reaches one fails to connect.
export const demoAddresses = {
  DEMO_ERP_URL: 'http://127.0.0.1:1',
  DEMO_CALL_TOOL_URL: 'http://127.0.0.1:2',
  DEMO_MCP_URL: 'http://127.0.0.1:3/mcp',
} as const;
