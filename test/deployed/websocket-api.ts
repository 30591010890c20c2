// The template's WebSocket API (ProtocolType WEBSOCKET) as API Gateway runs it, on one loopback
// port: a handshake at `/<stage>` needs the $connect authorizer's identity source (else API
// Gateway's own 401), runs the Lambda REQUEST authorizer with the WebSocket event and reads its IAM
// policy (an Allow of execute-api:Invoke on the route's ARN, else 403; a failure is a 500), then
// the $connect route's function, whose 2xx accepts the connection. Each text message runs the
// route its selection expression picks ($default here) with the authorizer's context; a binary
// message closes the connection with 1003, as API Gateway refuses one. A function that fails
// sends the client API Gateway's "Internal server error" message. The stage's management API
// (`/<stage>/@connections/<id>`, the functions' callback URL) takes PostToConnection and
// DeleteConnection signed with a function's own credential, each noted as
// execute-api:ManageConnections on the connection's ARN for the permission check.
import { isUtf8 } from 'node:buffer';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { type LocalAwsCredentials, refuseUnsigned } from '../../infra/local/aws-signature.js';
import { bytesOf } from '../../infra/local/call-tool-websocket.js';
import { listen } from '../../infra/local/net.js';
import { readRequestBody } from '../../infra/local/request-body.js';
import { refuseUpgrade } from '../../infra/local/upgrade-refusal.js';
import { type Assembly, isJson, type Json } from './assembly.js';
import { firstRef, functionNamed } from './http-api.js';
import { account, partition, region } from './intrinsics.js';
import { type LambdaFunction, LambdaInvocationError } from './lambda-workers.js';
import { actionMatches, resourceMatches } from './permissions.js';
import { type RecordedCall, signingCaller } from './recording-proxy.js';

/** The largest message API Gateway carries either way: 128 KB. */
const maxMessageBytes = 128 * 1024;

export interface WebSocketApiFront {
  /** The template's WebSocket API, by logical id. */
  readonly apiId: string;
  /** `http://127.0.0.1:<port>`: where its endpoints (wss:// and https://) are served here. */
  readonly origin: string;
  /** The functions' failures it answered for (a refused handshake, an "Internal server error" message). */
  readonly failures: readonly LambdaInvocationError[];
  /** Serves the API with the template's routes, once its functions run. */
  serve(options: {
    readonly resolve: (value: unknown, where: string) => string;
    readonly functionsByArn: ReadonlyMap<string, LambdaFunction>;
    /** Each function's own credential, by logical id, to tell who signed a management call. */
    readonly callers: ReadonlyMap<string, LocalAwsCredentials>;
    readonly record: (call: RecordedCall) => void;
  }): void;
  close(): Promise<void>;
}

interface Connection {
  readonly ws: WebSocket;
  readonly context: Json;
}

/** The API as its template declares it, its names resolved and its functions found. */
interface Api {
  readonly stage: string;
  /** Its id (its Ref). */
  readonly ref: string;
  /** `arn:…:execute-api:<region>:<account>:<id>/<stage>`. */
  readonly arn: string;
  readonly routes: ReadonlyMap<string, LambdaFunction>;
  /** The $connect route's authorizer and the headers its identity source requires (lowercased). */
  readonly authorizer: { readonly fn: LambdaFunction; readonly identityHeaders: readonly string[] } | null;
  /** The message field the route selection expression reads (`$request.body.<field>`), if any. */
  readonly selectionField: string | null;
}

/** The API running: its connections, and a function run as its integrations run it. */
interface Running {
  readonly api: Api;
  readonly origin: string;
  readonly connections: Map<string, Connection>;
  readonly wss: WebSocketServer;
  /** A function's failure is API Gateway's 500; the harness keeps the cause for the test's message. */
  failed(error: unknown): { statusCode: number };
}

const refusal = (status: number, message: string) => Response.json({ message }, { status });

/** Headers with the names as sent (API Gateway hands them over so), one value each and all. */
const headersOf = (request: IncomingMessage) => {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index] ?? '';
    const value = request.rawHeaders[index + 1] ?? '';
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  return { headers, multiValueHeaders };
};

/** Whether an authorizer's IAM policy allows execute-api:Invoke on the ARN (an explicit Deny wins). */
const policyAllows = (result: unknown, methodArn: string): boolean => {
  const document = isJson(result) ? result.policyDocument : undefined;
  const statements = isJson(document) && Array.isArray(document.Statement) ? document.Statement.filter(isJson) : [];
  const list = (value: unknown) => (Array.isArray(value) ? value.map(String) : [String(value)]);
  const matching = statements.filter(
    (statement) =>
      list(statement.Action).some((action) => actionMatches(action, 'execute-api:Invoke')) &&
      list(statement.Resource).some((resource) => resourceMatches(resource, methodArn)),
  );
  return matching.some((s) => s.Effect === 'Allow') && !matching.some((s) => s.Effect === 'Deny');
};

const readApi = (
  assembly: Assembly,
  apiId: string,
  resolve: (value: unknown, where: string) => string,
  functionsByArn: ReadonlyMap<string, LambdaFunction>,
): Api => {
  const resources = assembly.template.Resources;
  const stage = Object.values(resources).find(
    (resource) => resource.Type === 'AWS::ApiGatewayV2::Stage' && firstRef(resource.Properties.ApiId) === apiId,
  )?.Properties.StageName;
  if (typeof stage !== 'string') throw new Error(`${apiId}: the template gives the WebSocket API no stage`);
  const ref = resolve({ Ref: apiId }, apiId);
  const functionOf = (uri: unknown, where: string) => functionNamed(resolve(uri, where), functionsByArn, where);
  const routes = new Map<string, LambdaFunction>();
  let authorizerId: string | undefined;
  for (const [logicalId, { Type, Properties: props }] of Object.entries(resources)) {
    if (Type !== 'AWS::ApiGatewayV2::Route' || firstRef(props.ApiId) !== apiId) continue;
    const integration = resources[firstRef(props.Target) ?? ''];
    if (integration === undefined) throw new Error(`${logicalId}: its Target names no integration`);
    routes.set(String(props.RouteKey), functionOf(integration.Properties.IntegrationUri, `${logicalId} integration`));
    // WebSocket APIs authorize $connect only.
    if (props.RouteKey === '$connect' && props.AuthorizationType === 'CUSTOM')
      authorizerId = firstRef(props.AuthorizerId);
  }
  const authorizer = resources[authorizerId ?? '']?.Properties;
  const sources = Array.isArray(authorizer?.IdentitySource) ? authorizer.IdentitySource : [];
  const identityHeaders = sources.map((source) => {
    const header = /^route\.request\.header\.(.+)$/.exec(String(source))?.[1];
    if (header === undefined) throw new Error(`${apiId}: the harness reads no identity source ${String(source)}`);
    return header.toLowerCase();
  });
  const selection = /^\$request\.body\.(\w+)$/.exec(String(resources[apiId]?.Properties.RouteSelectionExpression));
  return {
    stage,
    ref,
    arn: `arn:${partition}:execute-api:${region}:${account}:${ref}/${stage}`,
    routes,
    authorizer:
      authorizer === undefined
        ? null
        : { fn: functionOf(authorizer.AuthorizerUri, `${apiId} authorizer`), identityHeaders },
    selectionField: selection?.[1] ?? null,
  };
};

const requestContext = (
  running: Running,
  at: { readonly connectionId: string; readonly routeKey: string; readonly eventType: string },
  request: IncomingMessage,
) => ({
  ...at,
  messageDirection: 'IN',
  stage: running.api.stage,
  apiId: running.api.ref,
  requestId: randomUUID(),
  requestTimeEpoch: Date.now(),
  domainName: new URL(running.origin).host,
  identity: { sourceIp: '127.0.0.1', userAgent: request.headers['user-agent'] ?? '' },
});

/** Runs a route's function with an event: its statusCode (200 when it answers none), or 500. */
const invoke = (running: Running, fn: LambdaFunction, event: Json) =>
  fn
    .invoke(event)
    .then((result) => ({ statusCode: isJson(result) ? Number(result.statusCode ?? 200) : 200 }), running.failed);

/** The authorizer's context (with its principalId), or the answer that refuses the handshake. */
const authorize = async (
  running: Running,
  request: IncomingMessage,
  connectionId: string,
): Promise<Json | Response> => {
  const { authorizer, arn } = running.api;
  if (authorizer === null) return {};
  if (authorizer.identityHeaders.some((name) => (request.headers[name] ?? '') === ''))
    return refusal(401, 'Unauthorized');
  const methodArn = `${arn}/$connect`;
  let result: unknown;
  try {
    result = await authorizer.fn.invoke({
      type: 'REQUEST',
      methodArn,
      ...headersOf(request),
      queryStringParameters: Object.fromEntries(new URL(request.url ?? '/', running.origin).searchParams),
      stageVariables: {},
      requestContext: requestContext(running, { connectionId, routeKey: '$connect', eventType: 'CONNECT' }, request),
    });
  } catch (error) {
    running.failed(error);
    return refusal(500, 'Internal Server Error');
  }
  if (!policyAllows(result, methodArn)) return refusal(403, 'Forbidden');
  const context = isJson(result) && isJson(result.context) ? result.context : {};
  return { ...context, principalId: isJson(result) ? String(result.principalId) : '' };
};

/** A text message: the route its selection expression picks, else $default, with the connection's context. */
const onMessage = async (running: Running, connectionId: string, request: IncomingMessage, data: RawData) => {
  const connection = running.connections.get(connectionId);
  if (connection === undefined) return;
  const body = bytesOf(data).toString('utf8');
  let selected: unknown;
  try {
    const parsed: unknown = JSON.parse(body);
    selected = isJson(parsed) && running.api.selectionField !== null ? parsed[running.api.selectionField] : undefined;
  } catch {
    // Not JSON: the $default route.
  }
  const routeKey = typeof selected === 'string' && running.api.routes.has(selected) ? selected : '$default';
  const fn = running.api.routes.get(routeKey);
  if (fn === undefined) return;
  const context = requestContext(running, { connectionId, routeKey, eventType: 'MESSAGE' }, request);
  const answer = await invoke(running, fn, {
    requestContext: { ...context, messageId: randomUUID(), authorizer: connection.context },
    body,
    isBase64Encoded: false,
  });
  if (answer.statusCode >= 500 && connection.ws.readyState === connection.ws.OPEN) {
    connection.ws.send(
      JSON.stringify({ message: 'Internal server error', connectionId, requestId: context.requestId }),
    );
  }
};

const upgrade = async (running: Running, request: IncomingMessage, socket: Duplex, head: Buffer) => {
  if (new URL(request.url ?? '/', running.origin).pathname !== `/${running.api.stage}`) {
    await refuseUpgrade(socket, refusal(403, 'Forbidden'));
    return;
  }
  // API Gateway's connection ids: 16 characters of base64.
  const connectionId = randomBytes(11).toString('base64').replace(/[+/]/g, 'A');
  const context = await authorize(running, request, connectionId);
  if (context instanceof Response) {
    await refuseUpgrade(socket, context);
    return;
  }
  const connect = running.api.routes.get('$connect');
  if (connect !== undefined) {
    const at = { connectionId, routeKey: '$connect', eventType: 'CONNECT' };
    const accepted = await invoke(running, connect, {
      ...headersOf(request),
      isBase64Encoded: false,
      requestContext: { ...requestContext(running, at, request), authorizer: context },
    });
    if (accepted.statusCode < 200 || accepted.statusCode > 299) {
      await refuseUpgrade(socket, refusal(accepted.statusCode, 'Forbidden'));
      return;
    }
  }
  running.wss.handleUpgrade(request, socket, head, (ws) => {
    running.connections.set(connectionId, { ws, context });
    ws.on('message', (data, binary) => {
      if (binary) ws.close(1003, 'Binary frames are not supported');
      else void onMessage(running, connectionId, request, data);
    });
    ws.once('close', () => {
      running.connections.delete(connectionId);
      const disconnect = running.api.routes.get('$disconnect');
      if (disconnect === undefined) return;
      const at = { connectionId, routeKey: '$disconnect', eventType: 'DISCONNECT' };
      const event = { requestContext: { ...requestContext(running, at, request), authorizer: context } };
      void invoke(running, disconnect, { ...event, isBase64Encoded: false });
    });
  });
};

/** PostToConnection and DeleteConnection, as the stage's callback URL answers them. */
const manage = async (
  running: Running,
  signers: Pick<Parameters<WebSocketApiFront['serve']>[0], 'callers' | 'record'>,
  request: IncomingMessage,
  response: ServerResponse,
) => {
  const body = await readRequestBody(request, maxMessageBytes + 1);
  const caller = await signingCaller(signers.callers, request, body);
  if (caller === null) {
    refuseUnsigned(response);
    return;
  }
  const path = new URL(request.url ?? '/', running.origin).pathname;
  const connectionId = decodeURIComponent(/^\/[^/]+\/@connections\/([^/]+)$/.exec(path)?.[1] ?? '');
  const method = request.method ?? 'GET';
  const resource = `${running.api.arn}/${method}/@connections/${connectionId}`;
  signers.record({ caller, action: 'execute-api:ManageConnections', resource });
  const connection = running.connections.get(connectionId);
  const error = (status: number, type: string) =>
    response
      .writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type })
      .end('{"message":null}');
  if (!path.startsWith(`/${running.api.stage}/@connections/`) || (method !== 'POST' && method !== 'DELETE'))
    error(403, 'ForbiddenException');
  else if (connection === undefined) error(410, 'GoneException');
  else if (method === 'DELETE') {
    connection.ws.close(1000);
    response.writeHead(204).end();
  } else if (body.length > maxMessageBytes) error(413, 'PayloadTooLargeException');
  else {
    // AWS does not say which frame carries the data; the client reads either.
    connection.ws.send(body, { binary: !isUtf8(body) });
    response.writeHead(200, { 'content-type': 'application/json' }).end();
  }
};

export const startWebSocketApi = async (assembly: Assembly): Promise<WebSocketApiFront | null> => {
  const resources = assembly.template.Resources;
  const apiId = Object.keys(resources).find(
    (id) => resources[id]?.Type === 'AWS::ApiGatewayV2::Api' && resources[id]?.Properties.ProtocolType === 'WEBSOCKET',
  );
  if (apiId === undefined) return null;
  const server = createServer();
  const listening = await listen(server, '127.0.0.1', 0);
  const origin = `http://127.0.0.1:${listening.port}`;
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes, perMessageDeflate: false });
  const connections = new Map<string, Connection>();
  const failures: LambdaInvocationError[] = [];
  const failed = (error: unknown) => {
    if (!(error instanceof LambdaInvocationError)) throw error;
    failures.push(error);
    return { statusCode: 500 };
  };
  return {
    apiId,
    origin,
    failures,
    serve: ({ resolve, functionsByArn, callers, record }) => {
      const running: Running = {
        api: readApi(assembly, apiId, resolve, functionsByArn),
        origin,
        connections,
        wss,
        failed,
      };
      server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
        socket.on('error', () => undefined);
        upgrade(running, request, socket, head).catch(() => socket.destroy());
      });
      server.on('request', (request: IncomingMessage, response: ServerResponse) => {
        manage(running, { callers, record }, request, response).catch(() => {
          if (!response.headersSent) response.writeHead(500).end();
        });
      });
    },
    close: async () => {
      for (const { ws } of connections.values()) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await listening.close();
    },
  };
};
