// The local stand-in for API Gateway's HTTP API: matches routes, authorizes with the local
// authorizer, turns each request into a payload-2.0 event with a Lambda context and invokes the
// very handler module Lambda would run; then writes its result back as HTTP.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { HttpResult } from '../../functions/commons/middleware.js';
import { unauthorizedResponse } from '../../shared/mcp/auth-challenge.js';
import { bodyTooLargeResponse, maxRequestBodyBytes } from '../../shared/mcp/endpoint.js';
import type { Authorization } from './authorizer.js';
import { type Listening, listen } from './net.js';

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
  /** Public base URL for the authentication challenge, given the request's Host header. */
  readonly publicUrl: (hostHeader: string | undefined) => string;
  readonly onError: (error: unknown) => void;
}

class BodyTooLarge extends Error {}

const readBody = (request: IncomingMessage, limit: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length'] ?? '0');
    if (declared > limit) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop reading at the cap: nothing beyond it is buffered.
        request.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });

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
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};

export const startHttpFront = async (options: HttpFrontOptions): Promise<Listening<Server>> => {
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://front.local');
    const method = (request.method ?? 'GET').toUpperCase();
    const route = options.routes.find(
      (candidate) =>
        (candidate.path === url.pathname ||
          (candidate.prefix === true && url.pathname.startsWith(`${candidate.path}/`))) &&
        (candidate.method === 'ANY' || candidate.method === method),
    );
    if (route === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not Found' }));
      return;
    }
    let body: Buffer;
    try {
      body = await readBody(request, maxRequestBodyBytes);
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) throw error;
      // Answer, then drop the connection rather than read the rest of the upload.
      response.once('finish', () => request.destroy());
      await writeWebResponse(response, bodyTooLargeResponse(), true);
      return;
    }
    let claims: Record<string, string> | undefined;
    if (route.authorize) {
      const authorization = await options.authorize(request.headers.authorization);
      if (authorization.kind === 'refused') {
        await writeWebResponse(
          response,
          unauthorizedResponse(options.publicUrl(request.headers.host), authorization.tokenPresented),
        );
        return;
      }
      claims = authorization.claims;
    }
    const headers = headerRecord(request);
    headers['x-forwarded-proto'] = 'http';
    const now = new Date();
    const contentType = headers['content-type'] ?? '';
    const asText = body.length === 0 || textType.test(contentType);
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey: `${route.method} ${route.path}${route.prefix === true ? '/{proxy+}' : ''}`,
      rawPath: url.pathname,
      rawQueryString: url.search.replace(/^\?/, ''),
      headers,
      ...(request.headers.cookie === undefined ? {} : { cookies: request.headers.cookie.split(/;\s*/) }),
      ...(url.search.length > 1 ? { queryStringParameters: Object.fromEntries(url.searchParams) } : {}),
      requestContext: {
        accountId: '000000000000',
        apiId: 'local',
        domainName: headers.host ?? 'localhost',
        domainPrefix: 'localhost',
        http: {
          method,
          path: url.pathname,
          protocol: `HTTP/${request.httpVersion}`,
          sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
          userAgent: headers['user-agent'] ?? '',
        },
        requestId: randomUUID(),
        routeKey: `${route.method} ${route.path}`,
        stage: '$default',
        time: now.toUTCString(),
        timeEpoch: now.getTime(),
        ...(claims === undefined ? {} : { authorizer: { jwt: { claims, scopes: [] } } }),
      },
      ...(body.length === 0 ? {} : { body: body.toString(asText ? 'utf8' : 'base64') }),
      isBase64Encoded: !asText,
    };
    const result = await route.fn(event, lambdaContext(route.functionName, route.timeoutMs));
    writeResult(response, result);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.onError(error);
      if (!response.headersSent) {
        response.writeHead(502, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ message: 'Internal Server Error' }));
      } else response.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  return listen(server, options.host, options.port);
};
