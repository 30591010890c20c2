// The local stand-in for API Gateway's HTTP API: matches routes, authorizes with the local
// authorizer, turns each request into a payload-2.0 event with a Lambda context and invokes the
// very handler module Lambda would run; then writes its result back as HTTP. The payload-2.0 event
// and the Lambda context are shared with the harness that runs the synthesized stack.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { type CallerContext, callerContext } from '../../functions/commons/caller-context.js';
import type { HttpResult } from '../../functions/commons/middleware.js';
import { unauthorizedResponse } from '../../shared/edge/mcp/auth-challenge.js';
import { bodyTooLargeResponse, maxRequestBodyBytes } from '../../shared/edge/mcp/http-refusals.js';
import type { Authorization } from './authorizer.js';
import type { CallToolFront } from './call-tool-front.js';
import { isWellFormedHost, type Listening, listen, urlHost } from './net.js';
import { BodyTooLargeError, readRequestBody } from './request-body.js';
import { refuseUpgrade } from './upgrade-refusal.js';

export type LambdaHttpFunction = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

export interface Route {
  /** HTTP method, or ANY. */
  readonly method: string;
  readonly path: string;
  /** Also matches every path below this one (API Gateway's `{proxy+}`). */
  readonly prefix?: boolean;
  readonly functionName: string;
  readonly fn: LambdaHttpFunction;
  readonly authorize: boolean;
  readonly timeoutMs: number;
}

export interface HttpFrontOptions {
  readonly host: string;
  readonly port: number;
  readonly routes: readonly Route[];
  readonly authorize: (authorizationHeader: string | undefined) => Promise<Authorization>;
  /**
   * The configured public base URL, which the authentication challenge names; null: the address
   * the front is bound to. Never the request's Host header, which any client chooses.
   */
  readonly publicUrl: string | null;
  readonly onError: (error: unknown) => void;
  /** A path served by a front of its own (its HTTP requests and its WebSocket upgrades): /tool/call-tool. */
  readonly channel?: CallToolFront;
}

const headerRecord = (request: IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (name === 'cookie' || value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
};

const textType = /^(application\/(json|xml|x-www-form-urlencoded|[\w.+-]*\+json)|text\/)/i;

const writeWebResponse = async (response: ServerResponse, web: Response, close = false): Promise<void> => {
  const body = Buffer.from(await web.arrayBuffer());
  const headers: Record<string, string> = {};
  web.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (close) headers.connection = 'close';
  response.writeHead(web.status, headers);
  response.end(body);
};

const writeResult = (response: ServerResponse, result: HttpResult): void => {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (result.cookies && result.cookies.length > 0) headers['set-cookie'] = result.cookies;
  const body =
    result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  response.writeHead(result.statusCode, headers);
  response.end(body);
};

/** A request as API Gateway's HTTP API receives it, before it becomes an event. */
export interface HttpApiRequest {
  readonly method: string;
  readonly url: URL;
  /** The matched route, `ANY /console/{proxy+}` style. */
  readonly routeKey: string;
  /** Lower-case names; the cookie header apart. */
  readonly headers: Record<string, string>;
  readonly cookieHeader?: string;
  readonly body: Buffer;
  readonly protocol: string;
  readonly sourceIp: string;
  /** What the route's authorizer passes on (`{ lambda: <its context> }` for the agent authorizer). */
  readonly authorizer?: Record<string, unknown>;
}

const monthNames = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const twoDigits = (value: number): string => String(value).padStart(2, '0');

/** A time as API Gateway writes an event's `requestContext.time`: `03/Dec/2026:17:05:09 +0000`. */
export const apiGatewayTime = (epochMs: number): string => {
  const at = new Date(epochMs);
  const clock = [at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds()].map(twoDigits).join(':');
  return `${twoDigits(at.getUTCDate())}/${monthNames[at.getUTCMonth()]}/${at.getUTCFullYear()}:${clock} +0000`;
};

/** The request time as the event writes it (to the second), written once a second, not per request. */
let utcSecond = { second: Number.NaN, text: '' };
const utcTimeOf = (epochMs: number): string => {
  const second = Math.floor(epochMs / 1000);
  if (second !== utcSecond.second) utcSecond = { second, text: apiGatewayTime(epochMs) };
  return utcSecond.text;
};

/** The payload-2.0 event API Gateway's HTTP API gives a function for a request. */
export const httpApiEvent = (request: HttpApiRequest): APIGatewayProxyEventV2 => {
  const { url, headers, body } = request;
  const nowMs = Date.now();
  const asText = body.length === 0 || textType.test(headers['content-type'] ?? '');
  return {
    version: '2.0',
    routeKey: request.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    headers,
    ...(request.cookieHeader === undefined ? {} : { cookies: request.cookieHeader.split(/;\s*/) }),
    ...(url.search.length > 1 ? { queryStringParameters: Object.fromEntries(url.searchParams) } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: request.method,
        path: url.pathname,
        protocol: request.protocol,
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: request.routeKey.replace(/\/\{proxy\+\}$/, ''),
      stage: '$default',
      time: utcTimeOf(nowMs),
      timeEpoch: nowMs,
      ...(request.authorizer === undefined ? {} : { authorizer: request.authorizer }),
    },
    ...(body.length === 0 ? {} : { body: body.toString(asText ? 'utf8' : 'base64') }),
    isBase64Encoded: !asText,
  };
};

/** The context's callbacks of the old handler style, which no handler here calls: one for every request. */
const ignored = (): void => undefined;

export const lambdaContext = (functionName: string, timeoutMs: number): Context => {
  const deadline = Date.now() + timeoutMs;
  const requestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis() {
      return Math.max(0, deadline - Date.now());
    },
    done: ignored,
    fail: ignored,
    succeed: ignored,
  };
};

/** What a request gets while the front stops: a clear refusal, and the connection closed. */
const refuseWhileStopping = (response: ServerResponse): void => {
  response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '10', connection: 'close' });
  response.end(JSON.stringify({ message: 'Service Unavailable: the gateway is stopping' }));
};

export interface HttpFront extends Listening<Server> {
  /**
   * The first half of a clean stop: new requests are refused (503, Retry-After, connection closed)
   * while requests in flight finish, each up to its function's deadline. The server keeps refusing
   * until `close`.
   */
  drain(): Promise<void>;
}

/** What the front's parts share: its options, the address it is bound to, whether it is stopping. */
interface FrontState {
  readonly options: HttpFrontOptions;
  /** The address the front is bound to, once it listens (no request arrives before). */
  boundUrl: string;
  stopping: boolean;
}

/** A request's work: the time its function's deadline runs out. */
interface Work {
  deadline: number;
}

const routeFor = (routes: readonly Route[], pathname: string, method: string): Route | undefined =>
  routes.find(
    (candidate) =>
      (candidate.path === pathname || (candidate.prefix === true && pathname.startsWith(`${candidate.path}/`))) &&
      (candidate.method === 'ANY' || candidate.method === method),
  );

/** Reads the body, authorizes, invokes the route's function with its event, and writes its result back. */
const invokeRoute = async (
  front: FrontState,
  call: { readonly route: Route; readonly method: string; readonly url: URL; readonly work: Work },
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> => {
  const { route, method, url } = call;
  let body: Buffer;
  try {
    body = await readRequestBody(request, maxRequestBodyBytes);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    // Answer, then drop the connection rather than read the rest of the upload.
    response.once('finish', () => request.destroy());
    await writeWebResponse(response, bodyTooLargeResponse(), true);
    return;
  }
  call.work.deadline = Date.now() + route.timeoutMs;
  let caller: CallerContext | undefined;
  if (route.authorize) {
    const authorization = await front.options.authorize(request.headers.authorization);
    if (authorization.kind === 'refused') {
      await writeWebResponse(
        response,
        unauthorizedResponse(front.options.publicUrl ?? front.boundUrl, authorization.tokenPresented),
      );
      return;
    }
    caller = callerContext(authorization.caller);
  }
  const headers = headerRecord(request);
  headers['x-forwarded-proto'] = 'http';
  const event = httpApiEvent({
    method,
    url,
    routeKey: `${route.method} ${route.path}${route.prefix === true ? '/{proxy+}' : ''}`,
    headers,
    ...(request.headers.cookie === undefined ? {} : { cookieHeader: request.headers.cookie }),
    body,
    protocol: `HTTP/${request.httpVersion}`,
    sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
    ...(caller === undefined ? {} : { authorizer: { lambda: caller } }),
  });
  const result = await route.fn(event, lambdaContext(route.functionName, route.timeoutMs));
  // While stopping, a finished request's connection is not kept for another one.
  if (front.stopping) response.setHeader('connection', 'close');
  writeResult(response, result);
};

const handle = async (
  front: FrontState,
  request: IncomingMessage,
  response: ServerResponse,
  work: Work,
): Promise<void> => {
  if (!isWellFormedHost(request.headers.host)) {
    // The client's mistake, answered as such: handlers build URLs from the Host header.
    response
      .writeHead(400, { 'content-type': 'application/json', connection: 'close' })
      .end(JSON.stringify({ message: 'Bad Request: the Host header is not a host name or address (and port)' }));
    return;
  }
  const url = new URL(request.url ?? '/', 'http://front.local');
  const { channel } = front.options;
  if (channel !== undefined && url.pathname === channel.path) {
    work.deadline = Date.now() + channel.timeoutMs;
    await channel.handleRequest(request, response, front.boundUrl);
    return;
  }
  const method = (request.method ?? 'GET').toUpperCase();
  const route = routeFor(front.options.routes, url.pathname, method);
  if (route === undefined) {
    if (front.stopping) response.setHeader('connection', 'close');
    response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not Found' }));
    return;
  }
  await invokeRoute(front, { route, method, url, work }, request, response);
};

/** Upgrades are the channel's alone (it makes its own checks); any other is refused, not left hanging. */
const upgrade = (front: FrontState, request: IncomingMessage, socket: Duplex, head: Buffer): void => {
  socket.on('error', () => undefined);
  const path = URL.parse(request.url ?? '/', 'http://front.local')?.pathname;
  const { channel } = front.options;
  if (channel !== undefined && path === channel.path) {
    channel.handleUpgrade(request, socket, head, front.boundUrl);
  } else
    void refuseUpgrade(socket, Response.json({ message: 'Not Found' }, { status: 404 })).catch(() => socket.destroy());
};

/** Waits for the requests in flight, each up to its function's deadline. */
const finishInflight = async (inflight: ReadonlyMap<Promise<void>, Work>): Promise<void> => {
  while (inflight.size > 0) {
    const waitMs = Math.max(...[...inflight.values()].map((work) => work.deadline)) - Date.now();
    if (waitMs <= 0) break;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...inflight.keys()]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, waitMs);
      }),
    ]);
    clearTimeout(timer);
  }
};

export const startHttpFront = async (options: HttpFrontOptions): Promise<HttpFront> => {
  const front: FrontState = { options, boundUrl: '', stopping: false };
  /** Requests in flight, each with the time its function's deadline runs out. */
  const inflight = new Map<Promise<void>, Work>();
  const longestTimeoutMs = Math.max(0, ...options.routes.map((route) => route.timeoutMs));
  const server = createServer((request, response) => {
    if (front.stopping) {
      refuseWhileStopping(response);
      return;
    }
    const work = { deadline: Date.now() + longestTimeoutMs };
    const done = handle(front, request, response, work)
      .catch((error: unknown) => {
        options.onError(error);
        if (!response.headersSent) {
          response.writeHead(502, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ message: 'Internal Server Error' }));
        } else response.destroy();
      })
      .finally(() => inflight.delete(done));
    inflight.set(done, work);
  });
  server.keepAliveTimeout = 65_000;
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) =>
    upgrade(front, request, socket, head),
  );
  const listening = await listen(server, options.host, options.port);
  front.boundUrl = `http://${urlHost(options.host)}:${listening.port}`;
  // A call sent to a system gets its answer and its outcome recorded before the front goes.
  const drain = async () => {
    front.stopping = true;
    server.closeIdleConnections();
    const channelDrained = options.channel?.drain();
    await finishInflight(inflight);
    await channelDrained;
  };
  return {
    ...listening,
    drain,
    close: async () => {
      await drain();
      await options.channel?.close();
      await listening.close();
    },
  };
};
