// KMS as the functions reach it: its SDK module and the function's own client, both made on the
// first call that signs, verifies, seals or opens, so a function whose calls need no key (a direct
// call, a console page without a session) does not load KMS's SDK at cold start.
import { onFirstUse } from './on-first-use.js';

/** KMS's SDK module, loaded on first use (see on-first-use.ts for why through a module of ours). */
export const kms = onFirstUse(() => import('./sdk/kms.js'));

/** The default client, in the function's own region, made on first use. */
export const defaultKmsClient = onFirstUse(async () => new (await kms()).KMSClient({}));
