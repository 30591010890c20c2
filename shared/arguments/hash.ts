// The fingerprint of a call's canonical arguments: what an approver's decision is bound to, what is
// stored beside the sealed arguments and checked again before an approved call is sent.
import { createHash } from 'node:crypto';

/** SHA-256 of the canonical JSON text, in hex. */
export const argumentsHash = (json: string): string => createHash('sha256').update(json).digest('hex');
