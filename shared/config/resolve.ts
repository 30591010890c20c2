// The configuration's data (as the file wrote it, already read from YAML) checked against its
// schema and turned into what the gateway uses: each `${env:NAME}` read from the environment of
// the process that runs it, each address checked. The one rule for both the local runtime, which
// reads the file, and the deployed functions, which read the data config:push compiled.
import type * as z from 'zod';
import {
  type ConfigProblem,
  formatPath,
  isLocalOnly,
  type ResolvedAgent,
  type ResolvedConfig,
  type ResolvedCredentials,
  type ResolvedPerson,
  type ResolvedSettings,
  type ResolvedSystem,
  type ResolvedWebhook,
} from './resolved.js';
import {
  type Credentials,
  GatewayConfig,
  type SecretRef,
  type System,
  secretReference,
  storedSecretReference,
} from './schema.js';
import { type SecretLookup, secretValue } from './stored-secrets.js';

/** The URL schemes each kind of system may be reached by. */
const urlSchemes: Readonly<Record<System['kind'], readonly string[]>> = {
  openapi: ['http', 'https'],
  'call-tool': ['http', 'https', 'ws', 'wss'],
  mcp: ['http', 'https'],
};

const describeValue = (value: unknown): string => {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

const valueAt = (data: unknown, path: readonly PropertyKey[]): unknown => {
  let current: unknown = data;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Reflect.get(current, key);
  }
  return current;
};

const issueMessage = (issue: z.core.$ZodIssue, value: unknown): string => {
  if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  return `${issue.message} (got ${describeValue(value)})`;
};

export interface LoadOptions {
  /**
   * What an unset `${env:NAME}` is: a problem (the runtime), or a note with a placeholder value
   * (checking or pushing a configuration on a machine that is not where it will run).
   */
  readonly unsetVariables?: 'problem' | 'placeholder';
  /** Receives each unset reference given a placeholder, as written (`${env:NAME}`), and its path. */
  readonly onUnset?: (reference: string, path: string) => void;
  /**
   * Where `${secret:…}` references are read: a lookup, or 'unread' in a function that never calls
   * a system or sends a notice (its references get placeholders, silently). Without either, every
   * secret reference is unset.
   */
  readonly secrets?: SecretLookup | 'unread';
  /**
   * Resolving for the deployed functions: the values only the local runtime uses (isLocalOnly)
   * are left unread, so a file that serves both needs no agent token or password in AWS.
   */
  readonly deployed?: boolean;
}

/** Placeholders for unset variables: a URL that can never resolve, and a marked string. */
const unsetPlaceholders = { url: 'https://unset-variable.invalid', text: '(unset variable)' } as const;

/** The path of every `${env:…}` and `${secret:…}` reference in the configuration's data, in document order. */
export const referencePaths = (data: unknown, path: readonly PropertyKey[] = []): PropertyKey[][] => {
  if (typeof data === 'string')
    return secretReference.test(data) || storedSecretReference.test(data) ? [[...path]] : [];
  if (Array.isArray(data)) return data.flatMap((item, index) => referencePaths(item, [...path, index]));
  if (data === null || typeof data !== 'object') return [];
  return Object.entries(data).flatMap(([key, item]) => referencePaths(item, [...path, key]));
};

export interface ResolveContext {
  /** The configuration file's name, for messages. */
  readonly file: string;
  readonly environment: Readonly<Record<string, string | undefined>>;
  readonly options?: LoadOptions | undefined;
  /** The line of the value at a path in the file (null when not known). */
  readonly lineAt: (path: readonly PropertyKey[]) => number | null;
  /** The line of a field's name, for an unknown field (by default the line of the object holding it). */
  readonly keyLineAt?: ((path: readonly PropertyKey[], key: string) => number | null) | undefined;
}

export type ConfigResolution = { ok: true; config: ResolvedConfig } | { ok: false; problems: ConfigProblem[] };

export const resolveConfigData = (data: unknown, context: ResolveContext): ConfigResolution => {
  const { file, environment, lineAt } = context;
  const options = context.options ?? {};
  // Parsed once per configuration: zod's compiled fast path would cost more to build than it saves.
  const parsed = GatewayConfig.safeParse(data, { jitless: true });
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => ({
        file,
        path: formatPath(issue.path),
        line:
          issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined && context.keyLineAt !== undefined
            ? context.keyLineAt(issue.path, issue.keys[0])
            : lineAt(issue.path),
        message: issueMessage(issue, valueAt(data, issue.path)),
      })),
    };
  }

  const problems: ConfigProblem[] = [];
  // Without policies nothing runs, so a file with systems and no `policies` is most likely one
  // caught half-written (policies come last); taking it would take every tool away. `policies: []`
  // still says "nothing runs" on purpose.
  if (parsed.data.systems.length > 0 && valueAt(data, ['policies']) === undefined) {
    problems.push({
      file,
      path: 'policies',
      line: null,
      message:
        'missing: a configuration with systems must list its policy files (without policies nothing runs; write "policies: []" to mean that)',
    });
  }
  /** The paths of references left unset (given a placeholder or refused). */
  const unsetPaths = new Set<string>();
  const unset = (path: PropertyKey[], reference: string, placeholder: string, message: string): string => {
    unsetPaths.add(formatPath(path));
    if (options.unsetVariables === 'placeholder') {
      options.onUnset?.(reference, formatPath(path));
      return placeholder;
    }
    problems.push({ file, path: formatPath(path), line: lineAt(path), message });
    return '';
  };
  const resolve = (secret: SecretRef, path: PropertyKey[], placeholder: string = unsetPlaceholders.text): string => {
    if (options.deployed === true && isLocalOnly(path)) {
      if (secret.kind === 'literal') return secret.value;
      unsetPaths.add(formatPath(path));
      return placeholder;
    }
    switch (secret.kind) {
      case 'literal':
        return secret.value;
      case 'env': {
        const value = environment[secret.name];
        if (value !== undefined && value.length > 0) return value;
        return unset(path, `\${env:${secret.name}}`, placeholder, `the environment variable ${secret.name} is not set`);
      }
      case 'secret': {
        if (options.secrets === 'unread') {
          unsetPaths.add(formatPath(path));
          return placeholder;
        }
        const reference = `\${secret:${secret.name}${secret.field === null ? '' : `#${secret.field}`}}`;
        if (options.secrets === undefined)
          return unset(path, reference, placeholder, `${reference} cannot be read here`);
        const read = secretValue(options.secrets, secret.name, secret.field);
        return read.ok ? read.value : unset(path, reference, placeholder, read.reason);
      }
    }
  };
  const credentials = (given: Credentials, path: PropertyKey[]): ResolvedCredentials => {
    switch (given.type) {
      case 'none':
        return given;
      case 'bearer':
        return { type: 'bearer', token: resolve(given.token, [...path, 'token']) };
      case 'api_key':
        return { type: 'api_key', header: given.header, value: resolve(given.value, [...path, 'value']) };
      case 'basic':
        return { type: 'basic', username: given.username, password: resolve(given.password, [...path, 'password']) };
    }
  };
  const address = (system: System, index: number): string => {
    const field = system.kind === 'openapi' ? 'base_url' : 'url';
    const path = ['systems', index, field];
    const given = system.kind === 'openapi' ? system.base_url : system.url;
    const url = resolve(given, path, unsetPlaceholders.url);
    const schemes = urlSchemes[system.kind];
    const pattern = new RegExp(`^(${schemes.join('|')})://[^/?#]+(/[^?#]*)?$`);
    if (url.length > 0 && !pattern.test(url)) {
      problems.push({
        file,
        path: formatPath(path),
        line: lineAt(path),
        message: `expected a ${schemes.join('/')} URL without query or fragment (got ${describeValue(url)})`,
      });
    }
    return url.replace(/\/+$/, '');
  };
  const systems = parsed.data.systems.map((system, index): ResolvedSystem => {
    const credentialsPath = ['systems', index, 'credentials'];
    switch (system.kind) {
      case 'openapi':
        return {
          ...system,
          base_url: address(system, index),
          credentials: credentials(system.credentials, credentialsPath),
        };
      case 'call-tool':
        return {
          ...system,
          url: address(system, index),
          credentials: credentials(system.credentials, credentialsPath),
        };
      default: {
        const given = system.credentials;
        return {
          ...system,
          url: address(system, index),
          credentials:
            given.type === 'oauth_client_credentials'
              ? {
                  type: 'oauth_client_credentials',
                  token_url: given.token_url ?? null,
                  client_id: given.client_id,
                  client_secret: resolve(given.client_secret, [...credentialsPath, 'client_secret']),
                  scope: given.scope ?? null,
                }
              : credentials(given, credentialsPath),
        };
      }
    }
  });
  const agents = parsed.data.agents.map(
    (agent, index): ResolvedAgent => ({
      id: agent.id,
      token: agent.token === undefined ? null : resolve(agent.token, ['agents', index, 'token']),
      tokenFromEnvironment: agent.token !== undefined && agent.token.kind !== 'literal',
      subject: agent.subject ?? null,
      groups: agent.groups,
      customer: agent.customer ?? null,
    }),
  );
  // A token names one agent: the authorizer would otherwise take the first agent holding it, with
  // its rights. An unset reference compares by what it names (two agents reading one variable collide).
  const agentOfToken = new Map<string, string>();
  parsed.data.agents.forEach((agent, index) => {
    const token = agent.token;
    if (token === undefined) return;
    const key = unsetPaths.has(formatPath(['agents', index, 'token']))
      ? `reference\0${JSON.stringify(token)}`
      : `value\0${agents[index]?.token ?? ''}`;
    const first = agentOfToken.get(key);
    if (first === undefined) {
      agentOfToken.set(key, agent.id);
      return;
    }
    const path = ['agents', index, 'token'];
    // The message names both agents and never the token.
    problems.push({
      file,
      path: formatPath(path),
      line: lineAt(path),
      message: `agents "${first}" and "${agent.id}" have the same token; each agent needs its own`,
    });
  });
  const people = (list: 'approvers' | 'customers') =>
    parsed.data[list].map(
      (person, index): ResolvedPerson => ({
        id: person.id,
        name: person.name ?? null,
        password: resolve(person.password, [list, index, 'password']),
        passwordFromEnvironment: person.password.kind !== 'literal',
        groups: person.groups,
      }),
    );
  const webhooks = parsed.data.settings.notifications.webhooks.map((webhook, index): ResolvedWebhook => {
    const path = ['settings', 'notifications', 'webhooks', index, 'url'];
    const url = resolve(webhook.url, path, unsetPlaceholders.url);
    // The message never repeats the URL: webhook URLs usually carry a token.
    if (url.length > 0 && !(URL.canParse(url) && /^https?:$/.test(new URL(url).protocol))) {
      problems.push({ file, path: formatPath(path), line: lineAt(path), message: 'expected an http(s) URL' });
    }
    return { url, text: webhook.text };
  });
  const settings: ResolvedSettings = {
    ...parsed.data.settings,
    notifications: { webhooks },
    data_key:
      parsed.data.settings.data_key === undefined
        ? null
        : resolve(parsed.data.settings.data_key, ['settings', 'data_key']),
  };
  const approvers = people('approvers');
  const customers = people('customers');
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: { ...parsed.data, settings, systems, agents, approvers, customers } };
};
