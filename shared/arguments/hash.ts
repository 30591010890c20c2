// The fingerprint of a call's canonical arguments: what an approver's decision is bound to, what is
// stored beside the sealed arguments and checked again before an approved call is sent.
import { hash } from 'node:crypto';

/**
 * SHA-256 of the canonical JSON text, in hex. One call per tools/call: the one-shot digest builds
 * no Hash object for the garbage collector to finalise.
 */
export const argumentsHash = (json: string): string => hash('sha256', json, 'hex');
