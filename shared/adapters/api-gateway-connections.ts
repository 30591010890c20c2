// The /tool/call-tool WebSocket front's connections in AWS, through API Gateway's management API:
// PostToConnection carries the frame, DeleteConnection closes. The client comes by injection, so
// tests point it at a loopback stand-in that records what it is asked.
import {
  type ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import type { ChannelConnections } from '../channel-connections.js';

/** A connection the client already closed answers 410 Gone. */
const isGone = (error: unknown): boolean => error instanceof Error && error.name === 'GoneException';

export class ApiGatewayConnections implements ChannelConnections {
  constructor(private readonly client: ApiGatewayManagementApiClient) {}

  async send(connectionId: string, frame: Uint8Array): Promise<'sent' | 'gone'> {
    try {
      await this.client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: frame }));
      return 'sent';
    } catch (error) {
      if (isGone(error)) return 'gone';
      throw error;
    }
  }

  async close(connectionId: string): Promise<void> {
    try {
      await this.client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  }
}
