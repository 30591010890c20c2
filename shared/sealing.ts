// Secret argument values are kept encrypted at rest (AES-256-GCM), opened only to send the call.
// The key comes from a port: a local data key, or KMS envelope keys in AWS.
export interface Sealer {
  /** Encrypts text, bound to `context` (the execution id): it opens only for the same context. */
  seal(plaintext: string, context: string): Promise<string>;
  open(sealed: string, context: string): Promise<string>;
}
