// The template's HTTP API: its routes (method and path, `{proxy+}`), the function each route's
// integration names, and the Lambda REQUEST authorizer that guards it, if any. A request is matched,
// authorized as API Gateway authorizes it (the identity source required, else its own 401; the
// authorizer function run with the payload-2.0 authorizer event; a simple response's isAuthorized
// false is its 403, and its context handed on), turned into the payload-2.0 event the local front
// makes (httpApiEvent), and the function's result read back as API Gateway reads it: a function
// that fails is a 500.
import { httpApiEvent } from '../../infra/local/http-front.js';
import { type Assembly, isJson } from './assembly.js';
import { type LambdaFunction, LambdaInvocationError } from './lambda-workers.js';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The function's own failure, when API Gateway answered 500 for it. */
  readonly functionError?: LambdaInvocationError;
}

/** The logical id a value refers to with its first Ref (a route's Target joins one in). */
export const firstRef = (value: unknown): string | undefined => {
  if (Array.isArray(value)) return value.map(firstRef).find((found) => found !== undefined);
  if (!isJson(value)) return undefined;
  if (typeof value.Ref === 'string') return value.Ref;
  return Object.values(value)
    .map(firstRef)
    .find((found) => found !== undefined);
};

/** A Lambda REQUEST authorizer of the HTTP API, as the template declares it. */
interface Authorizer {
  readonly logicalId: string;
  readonly fn: LambdaFunction;
  /** Request headers that must all be present (`$request.header.<name>`), lowercased. */
  readonly identityHeaders: readonly string[];
  readonly simpleResponses: boolean;
  /** How long an answer is reused for the same identity source values (0: never). */
  readonly ttlSeconds: number;
  /** Answers by identity source values, while their time lasts. */
  readonly cache: Map<string, { readonly until: number; readonly outcome: Authorized }>;
}

type Authorized = { context: Record<string, unknown> } | { refused: HttpAnswer };

interface Route {
  readonly method: string;
  readonly path: string;
  readonly greedy: boolean;
  readonly routeKey: string;
  readonly fn: LambdaFunction;
  /** The authorizer guarding the route (the agent authorizer, on the agents' routes). */
  readonly authorizer: Authorizer | undefined;
}

export interface HttpRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
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

/** The function a template value's ARN names (an integration's or an authorizer's URI). */
export const functionNamed = (
  uri: string,
  functionsByArn: ReadonlyMap<string, LambdaFunction>,
  where: string,
): LambdaFunction => {
  const fn = [...functionsByArn].find(([arn]) => uri.includes(arn))?.[1];
  if (fn === undefined) throw new Error(`${where}: ${uri} names no function of the template`);
  return fn;
};

const authorizerOf = (
  assembly: Assembly,
  logicalId: string,
  resolve: (value: unknown, where: string) => string,
  functionsByArn: ReadonlyMap<string, LambdaFunction>,
): Authorizer => {
  const props = assembly.template.Resources[logicalId]?.Properties;
  if (props === undefined) throw new Error(`The template has no authorizer ${logicalId}.`);
  if (props.AuthorizerType !== 'REQUEST' || props.AuthorizerPayloadFormatVersion !== '2.0') {
    throw new Error(`${logicalId}: the harness runs Lambda REQUEST authorizers of payload format 2.0 only`);
  }
  const sources = Array.isArray(props.IdentitySource) ? props.IdentitySource.map(String) : [];
  const identityHeaders = sources.map((source) => {
    const header = /^\$request\.header\.(.+)$/.exec(source)?.[1];
    if (header === undefined) throw new Error(`${logicalId}: the harness reads no identity source ${source}`);
    return header.toLowerCase();
  });
  return {
    logicalId,
    fn: functionNamed(resolve(props.AuthorizerUri, `${logicalId}.AuthorizerUri`), functionsByArn, logicalId),
    identityHeaders,
    simpleResponses: props.EnableSimpleResponses === true,
    ttlSeconds: Number(props.AuthorizerResultTtlInSeconds ?? 0),
    cache: new Map(),
  };
};

type RequestEvent = ReturnType<typeof httpApiEvent>;

/**
 * Runs a route's authorizer as API Gateway does: the request without its body, with the route's
 * ARN and the identity source's values; a simple response's isAuthorized, or a 500 when the
 * authorizer fails or answers what API Gateway cannot read. Answers the context to hand on, or the
 * answer that ends the request. An answer is reused for the same identity source values for the
 * authorizer's result TTL, as API Gateway caches it (a failure is not kept).
 */
const authorize = async (authorizer: Authorizer, event: RequestEvent, routeArn: string): Promise<Authorized> => {
  const identitySource = authorizer.identityHeaders.map((name) => event.headers[name] ?? '');
  const key = JSON.stringify(identitySource);
  const cached = authorizer.cache.get(key);
  if (cached !== undefined && cached.until > Date.now()) return cached.outcome;
  const outcome = await runAuthorizer(authorizer, event, routeArn, identitySource);
  const failed = 'refused' in outcome && outcome.refused.status === 500;
  if (authorizer.ttlSeconds > 0 && !failed)
    authorizer.cache.set(key, { until: Date.now() + authorizer.ttlSeconds * 1000, outcome });
  return outcome;
};

const runAuthorizer = async (
  authorizer: Authorizer,
  event: RequestEvent,
  routeArn: string,
  identitySource: readonly string[],
): Promise<Authorized> => {
  const { body: _body, isBase64Encoded: _encoded, ...request } = event;
  let result: unknown;
  try {
    result = await authorizer.fn.invoke({ ...request, type: 'REQUEST', routeArn, identitySource });
  } catch (error) {
    if (error instanceof LambdaInvocationError)
      return { refused: answer(500, { message: 'Internal Server Error' }, error) };
    throw error;
  }
  if (!authorizer.simpleResponses) throw new Error(`${authorizer.logicalId}: the harness reads simple responses only`);
  if (!isJson(result) || typeof result.isAuthorized !== 'boolean') {
    return { refused: answer(500, { message: 'Internal Server Error' }) };
  }
  if (!result.isAuthorized) return { refused: answer(403, { message: 'Forbidden' }) };
  return { context: isJson(result.context) ? result.context : {} };
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
  const apiRef = resolve({ Ref: apiId }, apiId);
  const routeArnPrefix = resolve(
    { 'Fn::Sub': `arn:\${AWS::Partition}:execute-api:\${AWS::Region}:\${AWS::AccountId}:${apiRef}/$default` },
    `${apiId} route ARN`,
  );
  const routes: Route[] = [];
  for (const [logicalId, { Type, Properties: props }] of Object.entries(resources)) {
    if (Type !== 'AWS::ApiGatewayV2::Route' || firstRef(props.ApiId) !== apiId) continue;
    const integration = resources[firstRef(props.Target) ?? ''];
    if (integration === undefined) throw new Error(`${logicalId}: its Target names no integration`);
    const uri = resolve(integration.Properties.IntegrationUri, `${logicalId} integration`);
    const [method = '', path = ''] = String(props.RouteKey).split(' ');
    if (props.AuthorizationType !== 'NONE' && props.AuthorizationType !== 'CUSTOM') {
      throw new Error(`${logicalId}: the harness plays no ${String(props.AuthorizationType)} authorization`);
    }
    routes.push({
      method,
      path: path.replace(/\/\{proxy\+\}$/, ''),
      greedy: path.endsWith('/{proxy+}'),
      routeKey: String(props.RouteKey),
      fn: functionNamed(uri, functionsByArn, `${logicalId} integration`),
      authorizer:
        props.AuthorizationType === 'CUSTOM'
          ? authorizerOf(assembly, firstRef(props.AuthorizerId) ?? '', resolve, functionsByArn)
          : undefined,
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
    });
    let passed: unknown = event;
    if (route.authorizer !== undefined) {
      // A request without the identity source never reaches the authorizer: API Gateway's own 401.
      if (route.authorizer.identityHeaders.some((name) => (headers[name] ?? '') === ''))
        return answer(401, { message: 'Unauthorized' });
      const authorized = await authorize(route.authorizer, event, `${routeArnPrefix}/${request.method}${url.pathname}`);
      if ('refused' in authorized) return authorized.refused;
      passed = { ...event, requestContext: { ...event.requestContext, authorizer: { lambda: authorized.context } } };
    }
    try {
      return readResult(await route.fn.invoke(passed));
    } catch (error) {
      if (error instanceof LambdaInvocationError) return answer(500, { message: 'Internal Server Error' }, error);
      throw error;
    }
  };
};
