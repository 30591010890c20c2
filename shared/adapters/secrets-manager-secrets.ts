// The deployed functions' `${secret:NAME}` values, from AWS Secrets Manager through Powertools
// Parameters: each secret `<prefix>NAME` read when a configuration names it, cached for a while,
// read again past that age or when asked for fresh values (after a system refused credentials).
// Powertools and the Secrets Manager client are loaded when a configuration first names a secret,
// so a function whose configuration names none never imports them.
import type { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SecretSource } from '../config/stored-secrets.js';
import { type ClientSource, clientOf, onFirstUse } from './on-first-use.js';

const parameters = onFirstUse(() => import('@aws-lambda-powertools/parameters/secrets'));
const secretsManager = onFirstUse(() => import('./sdk/secrets-manager.js'));

/** The default client, in the function's own region, made on first use. */
export const defaultSecretsManagerClient = onFirstUse(
  async () => new (await secretsManager()).SecretsManagerClient({}),
);

export class SecretsManagerSecrets implements SecretSource {
  private provider: Promise<SecretsProvider> | undefined;

  constructor(
    private readonly client: ClientSource<SecretsManagerClient>,
    /** Prepended to each name: the prefix the stack owns and grants (`approval-gateway/<stack>/`). */
    private readonly prefix: string,
    /** How long a value read is used before it is read again. */
    private readonly maxAgeSeconds: number,
  ) {}

  where(name: string): string {
    return `AWS Secrets Manager secret ${this.prefix}${name}`;
  }

  async read(names: readonly string[], fresh: boolean): Promise<Map<string, string | undefined>> {
    const values = new Map<string, string | undefined>();
    if (names.length === 0) return values;
    const [provider, { ParameterNotFoundError }] = await Promise.all([
      this.providerOf(),
      import('@aws-lambda-powertools/parameters/errors'),
    ]);
    await Promise.all(
      names.map(async (name) => {
        try {
          const value = await provider.get(`${this.prefix}${name}`, {
            maxAge: this.maxAgeSeconds,
            forceFetch: fresh,
            throwOnMissing: true,
          });
          values.set(
            name,
            typeof value === 'string' ? value : value === undefined ? undefined : Buffer.from(value).toString('utf8'),
          );
        } catch (error) {
          if (error instanceof ParameterNotFoundError) values.set(name, undefined);
          else throw error;
        }
      }),
    );
    return values;
  }

  private providerOf(): Promise<SecretsProvider> {
    this.provider ??= Promise.all([parameters(), clientOf(this.client)]).then(
      ([{ SecretsProvider }, awsSdkV3Client]) => new SecretsProvider({ awsSdkV3Client }),
      (error: unknown) => {
        // Tried again on the next read.
        this.provider = undefined;
        throw error;
      },
    );
    return this.provider;
  }
}
