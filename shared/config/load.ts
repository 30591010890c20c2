// Turns the configuration file's text into a validated, secret-resolved configuration, or into a
// list of problems that each name the file, the path in it, the line, the value and what was
// expected. Pure: the caller reads the file and passes the environment.
//
// Long: each rule of the file (placeholders, secrets, references between sections) is short, and
// they share the problem list and line map that make every message point at its line.
import { isMap, isNode, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { z } from 'zod';
import {
  type CallToolSystem,
  type Credentials,
  GatewayConfig,
  type McpSystem,
  type OpenApiSystem,
  type SecretRef,
  type System,
} from './schema.js';

export interface ConfigProblem {
  readonly file: string;
  /** Dotted path in the file, e.g. `agents[1].token`. */
  readonly path: string;
  readonly line: number | null;
  readonly message: string;
}

export interface ResolvedAgent {
  readonly id: string;
  readonly token: string;
  /** The token came from `${env:…}`: a real secret, never printed (literal tokens are demo values). */
  readonly tokenFromEnvironment: boolean;
  readonly groups: readonly string[];
  readonly customer: string | null;
}

export interface ResolvedPerson {
  readonly id: string;
  readonly name: string | null;
  readonly password: string;
  /** The password came from `${env:…}`: a real secret, never printed. */
  readonly passwordFromEnvironment: boolean;
  readonly groups: readonly string[];
}

export type ResolvedCredentials =
  | { readonly type: 'none' }
  | { readonly type: 'bearer'; readonly token: string }
  | { readonly type: 'api_key'; readonly header: string; readonly value: string }
  | { readonly type: 'basic'; readonly username: string; readonly password: string };

export type ResolvedMcpCredentials =
  | ResolvedCredentials
  | {
      readonly type: 'oauth_client_credentials';
      readonly token_url: string | null;
      readonly client_id: string;
      readonly client_secret: string;
      readonly scope: string | null;
    };

export interface ResolvedOpenApiSystem extends Omit<OpenApiSystem, 'base_url' | 'credentials'> {
  readonly base_url: string;
  readonly credentials: ResolvedCredentials;
}

export interface ResolvedCallToolSystem extends Omit<CallToolSystem, 'url' | 'credentials'> {
  readonly url: string;
  readonly credentials: ResolvedCredentials;
}

export interface ResolvedMcpSystem extends Omit<McpSystem, 'url' | 'credentials'> {
  readonly url: string;
  readonly credentials: ResolvedMcpCredentials;
}

/** A system as the gateway calls it: its address and credentials read, its kind deciding how. */
export type ResolvedSystem = ResolvedOpenApiSystem | ResolvedCallToolSystem | ResolvedMcpSystem;

/** The systems whose tools answer MCP's CallToolResult (a call-tool proxy, an MCP server). */
export type ResolvedToolServer = ResolvedCallToolSystem | ResolvedMcpSystem;

/** The URL schemes each kind of system may be reached by. */
const urlSchemes: Readonly<Record<System['kind'], readonly string[]>> = {
  openapi: ['http', 'https'],
  'call-tool': ['http', 'https', 'ws', 'wss'],
  mcp: ['http', 'https'],
};

export interface ResolvedWebhook {
  readonly url: string;
  readonly text: boolean;
}

export interface ResolvedSettings extends Omit<GatewayConfig['settings'], 'data_key' | 'notifications'> {
  readonly data_key: string | null;
  readonly notifications: { readonly webhooks: readonly ResolvedWebhook[] };
}

export interface ResolvedConfig
  extends Omit<GatewayConfig, 'settings' | 'agents' | 'systems' | 'approvers' | 'customers'> {
  readonly settings: ResolvedSettings;
  readonly systems: readonly ResolvedSystem[];
  readonly agents: readonly ResolvedAgent[];
  readonly approvers: readonly ResolvedPerson[];
  readonly customers: readonly ResolvedPerson[];
}

export type ConfigLoad =
  | {
      ok: true;
      config: ResolvedConfig;
      /** The line of a path in the file, for problems found after loading (null when absent). */
      lineAt: (path: readonly PropertyKey[]) => number | null;
    }
  | { ok: false; problems: ConfigProblem[] };

export const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    return text.length === 0 ? String(key) : `${text}.${String(key)}`;
  }, '');

export const formatProblem = (problem: ConfigProblem): string =>
  `${problem.file}${problem.line === null ? '' : `:${problem.line}`}: ${problem.path || '(top level)'}: ${problem.message}`;

/** Finds the key node of a field, to report the line of an unknown field. */
const keyNodeAt = (root: Node | null, path: readonly PropertyKey[], key: string): Node | null => {
  const parent = nodeAt(root, path);
  if (!isMap(parent)) return parent;
  const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === key);
  return isNode(pair?.key) ? pair.key : parent;
};

/** Finds the YAML node at a path, to report its line. */
const nodeAt = (root: Node | null, path: readonly PropertyKey[]): Node | null => {
  let node: Node | null = root;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && item.key.value === key);
      node = isNode(pair?.value) ? pair.value : null;
    } else if (isSeq(node) && typeof key === 'number') {
      const item = node.items[key];
      node = isNode(item) ? item : null;
    } else return node;
  }
  return node;
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
  /** Receives the names of unset variables given placeholders. */
  readonly onUnset?: (name: string, path: string) => void;
}

/** Placeholders for unset variables: a URL that can never resolve, and a marked string. */
const unsetPlaceholders = { url: 'https://unset-variable.invalid', text: '(unset variable)' } as const;

export const loadConfigText = (
  text: string,
  file: string,
  environment: Readonly<Record<string, string | undefined>>,
  options: LoadOptions = {},
): ConfigLoad => {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const lineOf = (node: Node | null): number | null =>
    node?.range === undefined || node.range === null ? null : lines.linePos(node.range[0]).line;
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((error) => ({
        file,
        path: '',
        line: lines.linePos(error.pos[0]).line,
        message: `not valid YAML: ${error.message.split('\n')[0]}`,
      })),
    };
  }
  const data: unknown = document.toJS() ?? {};
  const parsed = GatewayConfig.safeParse(data);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => ({
        file,
        path: formatPath(issue.path),
        line: lineOf(
          issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined
            ? keyNodeAt(document.contents, issue.path, issue.keys[0])
            : nodeAt(document.contents, issue.path),
        ),
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
  const resolve = (secret: SecretRef, path: PropertyKey[], placeholder: string = unsetPlaceholders.text): string => {
    if (secret.kind === 'literal') return secret.value;
    const value = environment[secret.name];
    if ((value === undefined || value.length === 0) && options.unsetVariables === 'placeholder') {
      options.onUnset?.(secret.name, formatPath(path));
      return placeholder;
    }
    if (value === undefined || value.length === 0) {
      problems.push({
        file,
        path: formatPath(path),
        line: lineOf(nodeAt(document.contents, path)),
        message: `the environment variable ${secret.name} is not set`,
      });
      return '';
    }
    return value;
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
        line: lineOf(nodeAt(document.contents, path)),
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
      token: resolve(agent.token, ['agents', index, 'token']),
      tokenFromEnvironment: agent.token.kind === 'env',
      groups: agent.groups,
      customer: agent.customer ?? null,
    }),
  );
  // A token names one agent: the authorizer would otherwise take the first agent holding it, with
  // its rights. An unset variable compares by its name (two agents reading one variable collide).
  const agentOfToken = new Map<string, string>();
  parsed.data.agents.forEach((agent, index) => {
    const token = agent.token;
    const unset = token.kind === 'env' && (environment[token.name] ?? '').length === 0;
    const key = unset ? `env\0${token.name}` : `value\0${agents[index]?.token ?? ''}`;
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
      line: lineOf(nodeAt(document.contents, path)),
      message: `agents "${first}" and "${agent.id}" have the same token; each agent needs its own`,
    });
  });
  const people = (list: 'approvers' | 'customers') =>
    parsed.data[list].map(
      (person, index): ResolvedPerson => ({
        id: person.id,
        name: person.name ?? null,
        password: resolve(person.password, [list, index, 'password']),
        passwordFromEnvironment: person.password.kind === 'env',
        groups: person.groups,
      }),
    );
  const webhooks = parsed.data.settings.notifications.webhooks.map((webhook, index): ResolvedWebhook => {
    const path = ['settings', 'notifications', 'webhooks', index, 'url'];
    const url = resolve(webhook.url, path, unsetPlaceholders.url);
    // The message never repeats the URL: webhook URLs usually carry a token.
    if (url.length > 0 && !(URL.canParse(url) && /^https?:$/.test(new URL(url).protocol))) {
      problems.push({
        file,
        path: formatPath(path),
        line: lineOf(nodeAt(document.contents, path)),
        message: 'expected an http(s) URL',
      });
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
  return {
    ok: true,
    config: {
      ...parsed.data,
      settings,
      systems,
      agents,
      approvers,
      customers,
    },
    lineAt: (path) => lineOf(nodeAt(document.contents, path)),
  };
};
