// A gRPC client of the tool gateway for tests, as a caller would write one: @grpc/grpc-js with the
// repo's proto, one stream per request, answers read in the order they come.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { projectPath } from '../../infra/paths.js';

const loaded = grpc.loadPackageDefinition(
  protoLoader.loadSync(['pcc_tool_gateway.proto', 'health.proto'], {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
    includeDirs: [projectPath('proto')],
  }),
);

type ClientConstructor = new (address: string, credentials: grpc.ChannelCredentials) => grpc.Client;
const constructorAt = (path: readonly string[]): ClientConstructor => {
  let node: unknown = loaded;
  for (const part of path) node = (node as Record<string, unknown>)[part];
  return node as ClientConstructor;
};
const GatewayClient = constructorAt(['pcc', 'toolgateway', 'v1', 'PccToolGateway']);
const HealthClient = constructorAt(['grpc', 'health', 'v1', 'Health']);

export interface ConnectFields {
  readonly server_id: string;
  readonly request_id?: string;
  readonly trace_context?: { trace_id: string; span_id: string };
  readonly tenant_info?: {
    bundle_id: string;
    feature_id: string;
    client_info: string;
    automated_test_device_group: string;
  };
  readonly server_cloudos_version?: string;
}

export interface ResponseMessage {
  readonly response?: 'connected' | 'json';
  readonly connected?: Record<string, never> | null;
  readonly json?: string;
}

export interface GatewayStream {
  readonly call: grpc.ClientDuplexStream<unknown, ResponseMessage>;
  connect(fields: ConnectFields): void;
  send(message: unknown): void;
  sendRaw(text: string): void;
  /** The next answer (bounded wait). */
  next(timeoutMs?: number): Promise<ResponseMessage>;
  /** The next JSON answer, parsed. */
  nextJson(timeoutMs?: number): Promise<Record<string, unknown>>;
  /** How the stream ended. */
  readonly ended: Promise<grpc.StatusObject>;
  close(): void;
}

export const openStream = (
  address: string,
  metadata: Readonly<Record<string, string>>,
  clients: grpc.Client[] = [],
): GatewayStream => {
  const client = new GatewayClient(address, grpc.credentials.createInsecure());
  clients.push(client);
  const meta = new grpc.Metadata();
  for (const [key, value] of Object.entries(metadata)) meta.set(key, value);
  const call = (
    client as unknown as { CreateMcpTransport(meta: grpc.Metadata): grpc.ClientDuplexStream<unknown, ResponseMessage> }
  ).CreateMcpTransport(meta);
  const received: ResponseMessage[] = [];
  const waiting: ((message: ResponseMessage) => void)[] = [];
  call.on('data', (message: ResponseMessage) => {
    const waiter = waiting.shift();
    if (waiter === undefined) received.push(message);
    else waiter(message);
  });
  const ended = new Promise<grpc.StatusObject>((resolve) => {
    call.on('status', resolve);
  });
  call.on('error', () => {});
  const next = (timeoutMs = 30_000) =>
    new Promise<ResponseMessage>((resolve, reject) => {
      const first = received.shift();
      if (first !== undefined) return resolve(first);
      const timer = setTimeout(() => reject(new Error(`No answer within ${timeoutMs} ms`)), timeoutMs);
      waiting.push((message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
  return {
    call,
    connect: (fields) => call.write({ connect: fields }),
    send: (message) => call.write({ request_body: JSON.stringify(message) }),
    sendRaw: (text) => call.write({ request_body: text }),
    next,
    nextJson: async (timeoutMs) => {
      const message = await next(timeoutMs);
      if (message.response !== 'json' || message.json === undefined) {
        throw new Error(`Expected a json answer, got ${JSON.stringify(message)}`);
      }
      return JSON.parse(message.json) as Record<string, unknown>;
    },
    ended,
    close: () => client.close(),
  };
};

/** grpc.health.v1.Health/Check, answered status. */
export const checkHealth = (address: string, service = ''): Promise<string> => {
  const client = new HealthClient(address, grpc.credentials.createInsecure()) as unknown as {
    Check(
      request: { service: string },
      callback: (error: grpc.ServiceError | null, answer?: { status: string }) => void,
    ): void;
    close(): void;
  };
  return new Promise((resolve, reject) => {
    client.Check({ service }, (error, answer) => {
      client.close();
      if (error !== null) reject(error);
      else resolve(answer?.status ?? '');
    });
  });
};
