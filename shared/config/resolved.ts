// The configuration as the gateway uses it: every reference read from the environment, and the
// problems a configuration can have, each naming its file, path and line. Free of the YAML
// parser, so the deployed functions share these types with the local runtime.
import type { CallToolSystem, GatewayConfig, McpSystem, OpenApiSystem } from './schema.js';

export interface ConfigProblem {
  readonly file: string;
  /** Dotted path in the file, e.g. `agents[1].token`. */
  readonly path: string;
  readonly line: number | null;
  readonly message: string;
}

export interface ResolvedAgent {
  readonly id: string;
  /** The bearer token it presents to the local runtime; null when it has none (deployed only). */
  readonly token: string | null;
  /** The token came from a reference (`${env:…}`, `${secret:…}`): a real secret, never printed (literal tokens are demo values). */
  readonly tokenFromEnvironment: boolean;
  /** Who it is in the deployed stack's tokens (the configured agent claim); null when not listed by subject. */
  readonly subject: string | null;
  readonly groups: readonly string[];
  readonly customer: string | null;
}

export interface ResolvedPerson {
  readonly id: string;
  readonly name: string | null;
  readonly password: string;
  /** The password came from a reference (`${env:…}`, `${secret:…}`): a real secret, never printed. */
  readonly passwordFromEnvironment: boolean;
  readonly groups: readonly string[];
}

export type ResolvedCredentials =
  | { readonly type: 'none' }
  | { readonly type: 'bearer'; readonly token: string }
  | { readonly type: 'api_key'; readonly header: string; readonly value: string }
  | { readonly type: 'basic'; readonly username: string; readonly password: string };

type ResolvedMcpCredentials =
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

export const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    return text.length === 0 ? String(key) : `${text}.${String(key)}`;
  }, '');

/** A problem at a path of the configuration file, placed on its line when the file says. */
export const configProblemAt = (
  file: string,
  lineAt: (path: readonly PropertyKey[]) => number | null,
  path: readonly PropertyKey[],
  message: string,
): ConfigProblem => ({ file, path: formatPath(path), line: lineAt(path), message });

export const formatProblem = (problem: ConfigProblem): string =>
  `${problem.file}${problem.line === null ? '' : `:${problem.line}`}: ${problem.path || '(top level)'}: ${problem.message}`;

/**
 * The values only the local runtime uses: agents' bearer tokens (in AWS agents hold the identity
 * provider's tokens), approvers' and customers' passwords (in AWS they sign in with OIDC) and the
 * data key (in AWS, KMS). Deployed functions leave them unread and config:push lets them be.
 */
export const isLocalOnly = (path: readonly PropertyKey[]): boolean => {
  const [list, , field] = path;
  return (
    (list === 'agents' && field === 'token' && path.length === 3) ||
    ((list === 'approvers' || list === 'customers') && field === 'password' && path.length === 3) ||
    (path.length === 2 && list === 'settings' && path[1] === 'data_key')
  );
};
