// The /tool/call-tool WebSocket front's connections in AWS, through API Gateway's management API:
// PostToConnection carries the frame, DeleteConnection closes. The client comes by injection, so
// tests point it at a loopback stand-in that records what it is asked. The API's SDK is loaded on
// the first frame sent: a $connect, the first invocation of every connection, posts nothing.
import type { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import type { ChannelConnections } from '../channel-connections.js';
import { type ClientSource, clientOf, onFirstUse } from './on-first-use.js';

const managementApi = onFirstUse(() => import('./sdk/api-gateway-management.js'));

/** The management API's client for the connections' endpoint, made on the first frame sent. */
export const managementClientAt = (endpoint: string): (() => Promise<ApiGatewayManagementApiClient>) =>
  onFirstUse(async () => new (await managementApi()).ApiGatewayManagementApiClient({ endpoint }));

/** A connection the client already closed answers 410 Gone. */
const isGone = (error: unknown): boolean => error instanceof Error && error.name === 'GoneException';

export class ApiGatewayConnections implements ChannelConnections {
  constructor(private readonly client: ClientSource<ApiGatewayManagementApiClient>) {}

  async send(connectionId: string, frame: Uint8Array): Promise<'sent' | 'gone'> {
    const [client, { PostToConnectionCommand }] = await Promise.all([clientOf(this.client), managementApi()]);
    try {
      await client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: frame }));
      return 'sent';
    } catch (error) {
      if (isGone(error)) return 'gone';
      throw error;
    }
  }

  async close(connectionId: string): Promise<void> {
    const [client, { DeleteConnectionCommand }] = await Promise.all([clientOf(this.client), managementApi()]);
    try {
      await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  }
}
