// Type declarations for the part of oidc-provider (panva, v9; it ships none) the tests use: a
// provider is a Koa application configured with clients, claims and an account lookup.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Account {
    readonly accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  export interface Configuration {
    readonly clients?: readonly Record<string, unknown>[];
    readonly claims?: Record<string, readonly string[] | null>;
    readonly scopes?: readonly string[];
    readonly conformIdTokenClaims?: boolean;
    readonly cookies?: { readonly keys?: readonly string[] };
    readonly jwks?: { readonly keys: readonly Record<string, unknown>[] };
    readonly features?: Record<string, { readonly enabled: boolean; readonly [setting: string]: unknown }>;
    readonly formats?: {
      readonly customizers?: {
        jwt?(context: unknown, token: unknown, jwt: { payload: Record<string, unknown> }): void | Promise<void>;
      };
    };
    readonly ttl?: Record<string, number>;
    /** Where each endpoint is served (e.g. `jwks`). */
    readonly routes?: Readonly<Record<string, string>>;
    findAccount?(context: unknown, sub: string, token?: unknown): Promise<Account | undefined>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    proxy: boolean;
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    /** The client model: a client not in the configuration is found in its adapter. */
    readonly Client: {
      readonly adapter: {
        upsert(id: string, payload: Record<string, unknown>, expiresIn: number): Promise<void>;
      };
    };
  }
}
