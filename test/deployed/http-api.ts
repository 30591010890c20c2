// The template's HTTP API: its routes (method and path, `{proxy+}`), the function each route's
// integration names, and whether an authorizer guards it (the agent authorizer, or none). A request is
// matched, authorized, turned into the payload-2.0 event the local front makes (httpApiEvent), and
// the function's result read back as API Gateway reads it: a function that fails is a 500.
import { callerContext } from '../../functions/commons/caller-context.js';
import { httpApiEvent } from '../../infra/local/http-front.js';
import type { Assembly, Json } from './assembly.js';
import { type LambdaFunction, LambdaInvocationError } from './lambda-workers.js';

/** An agent of the harness: an app client of the agents' pool. */
export interface Agent {
  readonly clientId: string;
}

/**
 * The agent as the HTTP API's agent authorizer passes it on for a verified Cognito client-credentials
 * token: its subject (the client id) and the token's expiry, no groups or customer (the Cognito
 * pool's tokens carry none; the functions take them from the configuration by subject).
 */
export const agentAuthorizer = (agent: Agent): Record<string, unknown> => ({
  lambda: callerContext({
    kind: 'token',
    subject: agent.clientId,
    groups: [],
    customerId: null,
    expiresAt: Math.floor(Date.now() / 1000) + 3600,
  }),
});

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The function's own failure, when API Gateway answered 500 for it. */
  readonly functionError?: LambdaInvocationError;
}

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The logical id a value refers to with its first Ref (a route's Target joins one in). */
const firstRef = (value: unknown): string | undefined => {
  if (Array.isArray(value)) return value.map(firstRef).find((found) => found !== undefined);
  if (!isJson(value)) return undefined;
  if (typeof value.Ref === 'string') return value.Ref;
  return Object.values(value)
    .map(firstRef)
    .find((found) => found !== undefined);
};

interface Route {
  readonly method: string;
  readonly path: string;
  readonly greedy: boolean;
  readonly routeKey: string;
  readonly fn: LambdaFunction;
  /** Whether an authorizer guards the route (the agent authorizer, on the agents' routes). */
  readonly authorized: boolean;
}

export interface HttpRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  agent?: Agent;
}

const answer = (status: number, body: unknown, functionError?: LambdaInvocationError): HttpAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
  ...(functionError === undefined ? {} : { functionError }),
});

/** A payload-2.0 result as API Gateway reads it: a result without statusCode is a 200 JSON body. */
const readResult = (result: unknown): HttpAnswer => {
  if (!isJson(result) || typeof result.statusCode !== 'number') return answer(200, result);
  const headers: Record<string, string> = {};
  if (isJson(result.headers))
    for (const [name, value] of Object.entries(result.headers)) headers[name.toLowerCase()] = String(value);
  if (Array.isArray(result.cookies)) headers['set-cookie'] = result.cookies.map(String).join('\n');
  const body = typeof result.body === 'string' ? result.body : '';
  return {
    status: result.statusCode,
    headers,
    body: result.isBase64Encoded === true ? Buffer.from(body, 'base64').toString('utf8') : body,
  };
};

export const httpRoutes = (
  assembly: Assembly,
  resolve: (value: unknown, where: string) => string,
  functionsByArn: ReadonlyMap<string, LambdaFunction>,
) => {
  const resources = assembly.template.Resources;
  const apiId = Object.entries(resources).find(
    ([, resource]) => resource.Type === 'AWS::ApiGatewayV2::Api' && resource.Properties.ProtocolType === 'HTTP',
  )?.[0];
  if (apiId === undefined) throw new Error('The template declares no HTTP API.');
  const apiUrl = new URL(resolve({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] }, `${apiId}.ApiEndpoint`));
  const routes: Route[] = [];
  for (const [logicalId, { Type, Properties: props }] of Object.entries(resources)) {
    if (Type !== 'AWS::ApiGatewayV2::Route' || firstRef(props.ApiId) !== apiId) continue;
    const integration = resources[firstRef(props.Target) ?? ''];
    if (integration === undefined) throw new Error(`${logicalId}: its Target names no integration`);
    const uri = resolve(integration.Properties.IntegrationUri, `${logicalId} integration`);
    const fn = [...functionsByArn].find(([arn]) => uri.includes(arn))?.[1];
    if (fn === undefined) throw new Error(`${logicalId}: its integration ${uri} names no function of the template`);
    const [method = '', path = ''] = String(props.RouteKey).split(' ');
    routes.push({
      method,
      path: path.replace(/\/\{proxy\+\}$/, ''),
      greedy: path.endsWith('/{proxy+}'),
      routeKey: String(props.RouteKey),
      fn,
      authorized: props.AuthorizationType === 'CUSTOM' || props.AuthorizationType === 'JWT',
    });
  }

  return async (request: HttpRequest): Promise<HttpAnswer> => {
    const url = new URL(request.path, apiUrl);
    const route = routes.find(
      (candidate) =>
        (candidate.method === 'ANY' || candidate.method === request.method) &&
        (candidate.path === url.pathname || (candidate.greedy && url.pathname.startsWith(`${candidate.path}/`))),
    );
    if (route === undefined) return answer(404, { message: 'Not Found' });
    if (route.authorized && request.agent === undefined) return answer(401, { message: 'Unauthorized' });
    const headers: Record<string, string> = { host: url.host, 'x-forwarded-proto': 'https' };
    for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
    const { cookie, ...withoutCookie } = headers;
    const event = httpApiEvent({
      method: request.method,
      url,
      routeKey: route.routeKey,
      headers: withoutCookie,
      ...(cookie === undefined ? {} : { cookieHeader: cookie }),
      body: Buffer.from(request.body ?? '', 'utf8'),
      protocol: 'HTTP/1.1',
      sourceIp: '127.0.0.1',
      ...(!route.authorized || request.agent === undefined ? {} : { authorizer: agentAuthorizer(request.agent) }),
    });
    try {
      return readResult(await route.fn.invoke(event));
    } catch (error) {
      if (error instanceof LambdaInvocationError) return answer(500, { message: 'Internal Server Error' }, error);
      throw error;
    }
  };
};
