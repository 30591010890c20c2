// The gateway's name and version as MCP clients see them (kept equal to package.json by a test).
export const gatewayInfo = { name: 'approval-gateway', title: 'Approval Gateway', version: '0.1.0' } as const;
