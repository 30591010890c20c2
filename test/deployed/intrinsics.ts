// CloudFormation's intrinsic functions, resolved against the harness's stand-ins: each resource's
// Ref and attributes are what the stand-in that plays it names it (a table's name, a key's ARN at
// the local KMS, the state machine's ARN at the local Step Functions), in the region `local` of
// account 000000000000 that the stand-ins use. A reference the harness has no stand-in for is an
// error naming it, never a guess.
import { isJson, type Template } from './assembly.js';

export const region = 'local';
export const account = '000000000000';
export const partition = 'aws';

/** What a resource resolves to: its Ref, and its attributes by name. */
export interface Physical {
  readonly ref: string;
  readonly attributes: Readonly<Record<string, string>>;
  /**
   * URLs AWS serves the resource at (a user pool's issuer, a WebSocket API's endpoints), each with
   * where its stand-in serves it here: a value the template builds on the first (a Fn::Join or
   * Fn::Sub) resolves on the second.
   */
  readonly played?: readonly { readonly url: string; readonly at: string }[];
}

const arn = (service: string, resource: string, regional = true) =>
  `arn:${partition}:${service}:${regional ? region : ''}:${regional || service === 'iam' ? account : ''}:${resource}`;

/**
 * The physical names of the resources the harness plays, from the template and the ARNs the
 * stand-ins gave (KMS keys). An API's endpoint is `https://<id>.execute-api.local.amazonaws.com`
 * (`wss://` for a WebSocket API's).
 */
export const physicalResources = (
  template: Template,
  stackName: string,
  given: {
    readonly keyArns: ReadonlyMap<string, string>;
    /** The issuer URL of each user pool a local OpenID provider plays, by logical id. */
    readonly poolIssuers?: ReadonlyMap<string, string>;
    /** Where the stand-in of an API serves it (`http://127.0.0.1:<port>`), by logical id. */
    readonly apiOrigins?: ReadonlyMap<string, string>;
  },
): Map<string, Physical> => {
  const resources = new Map<string, Physical>();
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    const props = resource.Properties;
    const named = (property: string, fallback: string) =>
      typeof props[property] === 'string' ? String(props[property]) : fallback;
    const generated = `${stackName}-${logicalId}`;
    switch (resource.Type) {
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable': {
        const name = named('TableName', generated);
        resources.set(logicalId, { ref: name, attributes: { Arn: arn('dynamodb', `table/${name}`) } });
        break;
      }
      case 'AWS::S3::Bucket': {
        const name = named('BucketName', generated.toLowerCase());
        resources.set(logicalId, { ref: name, attributes: { Arn: `arn:${partition}:s3:::${name}` } });
        break;
      }
      case 'AWS::KMS::Key': {
        const keyArn = given.keyArns.get(logicalId);
        if (keyArn !== undefined)
          resources.set(logicalId, { ref: keyArn.split('/').at(-1) ?? keyArn, attributes: { Arn: keyArn } });
        break;
      }
      case 'AWS::Events::EventBus': {
        const name = named('Name', generated);
        resources.set(logicalId, { ref: name, attributes: { Name: name, Arn: arn('events', `event-bus/${name}`) } });
        break;
      }
      case 'AWS::StepFunctions::StateMachine': {
        const name = named('StateMachineName', generated);
        const machineArn = arn('states', `stateMachine:${name}`);
        resources.set(logicalId, { ref: machineArn, attributes: { Name: name, Arn: machineArn } });
        break;
      }
      case 'AWS::Lambda::Function': {
        const name = named('FunctionName', generated);
        resources.set(logicalId, { ref: name, attributes: { Arn: arn('lambda', `function:${name}`) } });
        break;
      }
      case 'AWS::IAM::Role':
        resources.set(logicalId, { ref: logicalId, attributes: { Arn: arn('iam', `role/${logicalId}`, false) } });
        break;
      case 'AWS::Logs::LogGroup':
        resources.set(logicalId, { ref: logicalId, attributes: { Arn: arn('logs', `log-group:${logicalId}:*`) } });
        break;
      case 'AWS::Cognito::UserPool': {
        const id = `${region}_${logicalId}`;
        const issuer = `https://cognito-idp.${region}.amazonaws.com/${id}`;
        const at = given.poolIssuers?.get(logicalId);
        resources.set(logicalId, {
          ref: id,
          attributes: {
            Arn: arn('cognito-idp', `userpool/${id}`),
            ProviderURL: (at ?? issuer).replace(/^https:\/\//, ''),
          },
          ...(at === undefined ? {} : { played: [{ url: issuer, at }] }),
        });
        break;
      }
      case 'AWS::Cognito::UserPoolDomain':
        // Ref is the domain prefix; the sign-in pages are https://<prefix>.auth.<region>.amazoncognito.com.
        resources.set(logicalId, { ref: logicalId.toLowerCase(), attributes: {} });
        break;
      case 'AWS::Cognito::UserPoolClient':
        resources.set(logicalId, { ref: logicalId.toLowerCase(), attributes: {} });
        break;
      case 'AWS::ApiGatewayV2::Api': {
        const id = logicalId.toLowerCase().slice(0, 10);
        const webSocket = props.ProtocolType === 'WEBSOCKET';
        const host = `${id}.execute-api.${region}.amazonaws.com`;
        // A WebSocket API's stand-in serves the connections (wss://) and the management API (https://).
        const at = given.apiOrigins?.get(logicalId);
        resources.set(logicalId, {
          ref: id,
          attributes: { ApiEndpoint: `${webSocket ? 'wss' : 'https'}://${host}` },
          ...(at === undefined
            ? {}
            : {
                played: [
                  { url: `https://${host}`, at },
                  { url: `wss://${host}`, at: at.replace(/^http/, 'ws') },
                ],
              }),
        });
        break;
      }
      case 'AWS::SNS::Topic':
        resources.set(logicalId, { ref: arn('sns', logicalId), attributes: { TopicName: logicalId } });
        break;
      default:
        // Not played by the harness: a reference to it is refused when resolved.
        break;
    }
  }
  return resources;
};

const pseudo: Record<string, string> = {
  'AWS::Region': region,
  'AWS::AccountId': account,
  'AWS::Partition': partition,
  'AWS::URLSuffix': 'amazonaws.com',
};

/** Resolves one value of the template (a string, or an intrinsic function) to a string. */
export const resolver = (resources: ReadonlyMap<string, Physical>, stackName: string) => {
  const played = [...resources.values()].flatMap((physical) => physical.played ?? []);
  /** A URL built on one AWS serves a played resource at, on where the stand-in serves it. */
  const local = (value: string): string => {
    const found = played.find(({ url }) => value === url || value.startsWith(`${url}/`));
    return found === undefined ? value : `${found.at}${value.slice(found.url.length)}`;
  };
  const resolve = (value: unknown, where: string, variables: Readonly<Record<string, string>> = {}): string => {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (!isJson(value) || Object.keys(value).length !== 1) {
      throw new Error(`${where}: cannot resolve ${JSON.stringify(value)}`);
    }
    const [name, argument] = Object.entries(value)[0] ?? [];
    const list = (expected: number): unknown[] => {
      if (!Array.isArray(argument) || argument.length < expected) {
        throw new Error(`${where}: ${name} expects a list of ${expected}, got ${JSON.stringify(argument)}`);
      }
      return argument;
    };
    const lookup = (logicalId: string) => {
      if (logicalId === 'AWS::StackName') return { ref: stackName, attributes: {} };
      const found = resources.get(logicalId);
      if (found === undefined) throw new Error(`${where}: the harness plays no resource ${logicalId}`);
      return found;
    };
    switch (name) {
      case 'Ref': {
        const target = String(argument);
        return variables[target] ?? pseudo[target] ?? lookup(target).ref;
      }
      case 'Fn::GetAtt': {
        const [logicalId, attribute] = list(2).map(String);
        const found = lookup(logicalId ?? '').attributes[attribute ?? ''];
        if (found === undefined) throw new Error(`${where}: the harness gives ${logicalId} no attribute ${attribute}`);
        return found;
      }
      case 'Fn::Join': {
        const [separator, parts] = list(2);
        if (!Array.isArray(parts)) throw new Error(`${where}: Fn::Join expects a list of parts`);
        return local(
          parts.map((part, index) => resolve(part, `${where}[${index}]`, variables)).join(String(separator)),
        );
      }
      case 'Fn::Sub': {
        const [text, own] = typeof argument === 'string' ? [argument, {}] : list(2);
        const subs: Record<string, string> = { ...variables };
        if (isJson(own)) for (const [key, part] of Object.entries(own)) subs[key] = resolve(part, `${where}.${key}`);
        return local(
          String(text).replace(/\$\{([^}!]+)\}/g, (_, reference: string) => {
            const [logicalId, attribute] = reference.split('.');
            if (subs[reference] !== undefined) return subs[reference];
            if (attribute !== undefined) return resolve({ 'Fn::GetAtt': [logicalId, attribute] }, where);
            return resolve({ Ref: reference }, where, subs);
          }),
        );
      }
      case 'Fn::Select': {
        const [index, items] = list(2);
        const resolved = Array.isArray(items) ? items : resolveList(items, where);
        const item = resolved[Number(index)];
        if (item === undefined) throw new Error(`${where}: Fn::Select index ${String(index)} is out of range`);
        return resolve(item, where, variables);
      }
      default:
        throw new Error(`${where}: the harness does not resolve ${name}`);
    }
  };
  const resolveList = (value: unknown, where: string): string[] => {
    if (isJson(value) && 'Fn::Split' in value) {
      const argument = value['Fn::Split'];
      if (!Array.isArray(argument) || argument.length !== 2) throw new Error(`${where}: Fn::Split expects two items`);
      return resolve(argument[1], where).split(String(argument[0]));
    }
    throw new Error(`${where}: cannot resolve ${JSON.stringify(value)} as a list`);
  };
  return resolve;
};
