// Secrets Manager's SDK as the gateway uses it, loaded on first use (see on-first-use.ts for why through a module of ours).
export { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
