// The official MCP client, connected to a gateway as one agent (its bearer token, plus any headers).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

export const connectAgent = async (
  mcpUrl: string,
  token: string,
  headers: Record<string, string> = {},
  name = 'gateway-tests',
): Promise<Client> => {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}`, ...headers } },
    }),
  );
  return client;
};
