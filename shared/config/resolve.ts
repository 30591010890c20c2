// The configuration's data (as the file wrote it, already read from YAML) checked against its
// schema and turned into what the gateway uses: each `${env:NAME}` read from the environment of
// the process that runs it, each address checked. The one rule for both the local runtime, which
// reads the file, and the deployed functions, which read the data config:push compiled.
import type * as z from 'zod';
import {
  type ConfigProblem,
  configProblemAt,
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

/** Where each problem of the schema is, and what it says. */
const schemaProblems = (issues: readonly z.core.$ZodIssue[], data: unknown, context: ResolveContext): ConfigProblem[] =>
  issues.map((issue) => ({
    file: context.file,
    path: formatPath(issue.path),
    line:
      issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined && context.keyLineAt !== undefined
        ? context.keyLineAt(issue.path, issue.keys[0])
        : context.lineAt(issue.path),
    message: issueMessage(issue, valueAt(data, issue.path)),
  }));

/**
 * Reads the values a configuration refers to (literal, `${env:…}`, `${secret:…}`) by the options'
 * rules, and collects the problems found on the way, each at its path and line.
 */
class References {
  readonly problems: ConfigProblem[] = [];
  /** The paths of references left unset (given a placeholder or refused). */
  readonly unsetPaths = new Set<string>();
  private readonly options: LoadOptions;

  constructor(private readonly context: ResolveContext) {
    this.options = context.options ?? {};
  }

  problem(path: readonly PropertyKey[], message: string): void {
    this.problems.push(configProblemAt(this.context.file, this.context.lineAt, path, message));
  }

  /** A reference's value, or its placeholder when it is left unread or unset. */
  value(secret: SecretRef, path: PropertyKey[], placeholder: string = unsetPlaceholders.text): string {
    if (this.options.deployed === true && isLocalOnly(path)) {
      if (secret.kind === 'literal') return secret.value;
      this.unsetPaths.add(formatPath(path));
      return placeholder;
    }
    switch (secret.kind) {
      case 'literal':
        return secret.value;
      case 'env': {
        const value = this.context.environment[secret.name];
        if (value !== undefined && value.length > 0) return value;
        const message = `the environment variable ${secret.name} is not set`;
        return this.unset(path, `\${env:${secret.name}}`, placeholder, message);
      }
      case 'secret':
        return this.storedSecret(secret, path, placeholder);
    }
  }

  private storedSecret(
    secret: Extract<SecretRef, { kind: 'secret' }>,
    path: PropertyKey[],
    placeholder: string,
  ): string {
    const secrets = this.options.secrets;
    if (secrets === 'unread') {
      this.unsetPaths.add(formatPath(path));
      return placeholder;
    }
    const reference = `\${secret:${secret.name}${secret.field === null ? '' : `#${secret.field}`}}`;
    if (secrets === undefined) return this.unset(path, reference, placeholder, `${reference} cannot be read here`);
    const read = secretValue(secrets, secret.name, secret.field);
    return read.ok ? read.value : this.unset(path, reference, placeholder, read.reason);
  }

  /** An unset reference: a placeholder (noted) or a problem, as the options say. */
  private unset(path: PropertyKey[], reference: string, placeholder: string, message: string): string {
    this.unsetPaths.add(formatPath(path));
    if (this.options.unsetVariables === 'placeholder') {
      this.options.onUnset?.(reference, formatPath(path));
      return placeholder;
    }
    this.problem(path, message);
    return '';
  }

  credentials(given: Credentials, path: PropertyKey[]): ResolvedCredentials {
    switch (given.type) {
      case 'none':
        return given;
      case 'bearer':
        return { type: 'bearer', token: this.value(given.token, [...path, 'token']) };
      case 'api_key':
        return { type: 'api_key', header: given.header, value: this.value(given.value, [...path, 'value']) };
      case 'basic':
        return { type: 'basic', username: given.username, password: this.value(given.password, [...path, 'password']) };
    }
  }

  /** A system's address, checked against the schemes its kind is reached by, without its trailing slashes. */
  address(system: System, index: number): string {
    const field = system.kind === 'openapi' ? 'base_url' : 'url';
    const path = ['systems', index, field];
    const url = this.value(system.kind === 'openapi' ? system.base_url : system.url, path, unsetPlaceholders.url);
    const schemes = urlSchemes[system.kind];
    const pattern = new RegExp(`^(${schemes.join('|')})://[^/?#]+(/[^?#]*)?$`);
    if (url.length > 0 && !pattern.test(url)) {
      this.problem(path, `expected a ${schemes.join('/')} URL without query or fragment (got ${describeValue(url)})`);
    }
    return url.replace(/\/+$/, '');
  }
}

const resolveSystem = (references: References, system: System, index: number): ResolvedSystem => {
  const credentialsPath = ['systems', index, 'credentials'];
  switch (system.kind) {
    case 'openapi':
      return {
        ...system,
        base_url: references.address(system, index),
        credentials: references.credentials(system.credentials, credentialsPath),
      };
    case 'call-tool':
      return {
        ...system,
        url: references.address(system, index),
        credentials: references.credentials(system.credentials, credentialsPath),
      };
    default: {
      const given = system.credentials;
      return {
        ...system,
        url: references.address(system, index),
        credentials:
          given.type === 'oauth_client_credentials'
            ? {
                type: 'oauth_client_credentials',
                token_url: given.token_url ?? null,
                client_id: given.client_id,
                client_secret: references.value(given.client_secret, [...credentialsPath, 'client_secret']),
                scope: given.scope ?? null,
              }
            : references.credentials(given, credentialsPath),
      };
    }
  }
};

const resolveAgent = (
  references: References,
  agent: GatewayConfig['agents'][number],
  index: number,
): ResolvedAgent => ({
  id: agent.id,
  token: agent.token === undefined ? null : references.value(agent.token, ['agents', index, 'token']),
  tokenFromEnvironment: agent.token !== undefined && agent.token.kind !== 'literal',
  subject: agent.subject ?? null,
  groups: agent.groups,
  customer: agent.customer ?? null,
});

/**
 * A token names one agent: the authorizer would otherwise take the first agent holding it, with
 * its rights. An unset reference compares by what it names (two agents reading one variable collide).
 */
const checkTokensDistinct = (
  references: References,
  given: GatewayConfig['agents'],
  agents: readonly ResolvedAgent[],
): void => {
  const agentOfToken = new Map<string, string>();
  given.forEach((agent, index) => {
    const token = agent.token;
    if (token === undefined) return;
    const path = ['agents', index, 'token'];
    const key = references.unsetPaths.has(formatPath(path))
      ? `reference\0${JSON.stringify(token)}`
      : `value\0${agents[index]?.token ?? ''}`;
    const first = agentOfToken.get(key);
    if (first === undefined) {
      agentOfToken.set(key, agent.id);
      return;
    }
    // The message names both agents and never the token.
    references.problem(path, `agents "${first}" and "${agent.id}" have the same token; each agent needs its own`);
  });
};

const resolvePeople = (references: References, config: GatewayConfig, list: 'approvers' | 'customers') =>
  config[list].map(
    (person, index): ResolvedPerson => ({
      id: person.id,
      name: person.name ?? null,
      password: references.value(person.password, [list, index, 'password']),
      passwordFromEnvironment: person.password.kind !== 'literal',
      groups: person.groups,
    }),
  );

const resolveSettings = (references: References, settings: GatewayConfig['settings']): ResolvedSettings => {
  const webhooks = settings.notifications.webhooks.map((webhook, index): ResolvedWebhook => {
    const path = ['settings', 'notifications', 'webhooks', index, 'url'];
    const url = references.value(webhook.url, path, unsetPlaceholders.url);
    // The message never repeats the URL: webhook URLs usually carry a token.
    if (url.length > 0 && !(URL.canParse(url) && /^https?:$/.test(new URL(url).protocol))) {
      references.problem(path, 'expected an http(s) URL');
    }
    return { url, text: webhook.text };
  });
  return {
    ...settings,
    notifications: { webhooks },
    data_key: settings.data_key === undefined ? null : references.value(settings.data_key, ['settings', 'data_key']),
  };
};

export const resolveConfigData = (data: unknown, context: ResolveContext): ConfigResolution => {
  // Parsed once per configuration: zod's compiled fast path would cost more to build than it saves.
  const parsed = GatewayConfig.safeParse(data, { jitless: true });
  if (!parsed.success) return { ok: false, problems: schemaProblems(parsed.error.issues, data, context) };
  const config = parsed.data;
  const references = new References(context);
  // Without policies nothing runs, so a file with systems and no `policies` is most likely one
  // caught half-written (policies come last); taking it would take every tool away. `policies: []`
  // still says "nothing runs" on purpose.
  if (config.systems.length > 0 && valueAt(data, ['policies']) === undefined) {
    references.problems.push({
      file: context.file,
      path: 'policies',
      line: null,
      message:
        'missing: a configuration with systems must list its policy files (without policies nothing runs; write "policies: []" to mean that)',
    });
  }
  const systems = config.systems.map((system, index) => resolveSystem(references, system, index));
  const agents = config.agents.map((agent, index) => resolveAgent(references, agent, index));
  checkTokensDistinct(references, config.agents, agents);
  const settings = resolveSettings(references, config.settings);
  const approvers = resolvePeople(references, config, 'approvers');
  const customers = resolvePeople(references, config, 'customers');
  if (references.problems.length > 0) return { ok: false, problems: references.problems };
  return { ok: true, config: { ...config, settings, systems, agents, approvers, customers } };
};
