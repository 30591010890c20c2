// What an approval receipt says: which call was approved (its execution, agent, tool and canonical
// arguments), by whom and when, which gateway says so, and for an HTTP system the exact request it
// was sent as, so the system checks the bytes it received without re-canonicalizing anything.
import { createHash } from 'node:crypto';
import { staffApprovalsOf } from '../approvals/quorum.js';
import type { Execution } from '../executions/execution.js';
import type { OutboundRequest } from '../invoke/system-client.js';
import type { ReceiptSigner } from './signer.js';

/** How long a receipt is good for after it is signed, in seconds (the call is sent right after). */
const receiptLifetimeSeconds = 300;

/** The header an HTTP system receives the receipt in. */
export const receiptHeader = 'approval-receipt';

/** Where an MCP or call-tool system (its tools/call) and the agent (the tool result) find the receipt. */
export const receiptMetaKey = 'approval-gateway/receipt';

/** One person's part in the approval: staff approved, or the customer confirmed. */
interface ReceiptApproval {
  readonly role: 'staff' | 'customer';
  /** The approver's id, or the customer's. */
  readonly by: string;
  /** When they decided (ISO time). */
  readonly at: string;
}

/** The HTTP request as sent: method, path and query, and the SHA-256 (base64url) of the body bytes. */
export interface HttpBinding {
  readonly method: string;
  readonly path: string;
  readonly body_sha256: string | null;
}

type ReceiptClaims = {
  readonly iss: string;
  readonly sub: string;
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
  readonly tool: string;
  readonly args_sha256: string;
  readonly approvals: readonly ReceiptApproval[];
  readonly http?: HttpBinding;
};

/**
 * The human steps the record holds, in the order they are taken: the customer confirms first,
 * staff approve after, each approver of a quorum in turn. A customer alone decides the call
 * (decided_by is then the customer).
 */
const approvalsOf = (execution: Execution): ReceiptApproval[] => {
  const step = execution.decision?.step ?? null;
  const approvals: ReceiptApproval[] = [];
  const customer = execution.customer_id ?? execution.decided_by;
  if (step?.customer === true && customer !== null && execution.customer_confirmed_at !== null) {
    approvals.push({ role: 'customer', by: customer, at: execution.customer_confirmed_at });
  }
  for (const { by, at } of staffApprovalsOf(execution)) approvals.push({ role: 'staff', by, at });
  return approvals;
};

/**
 * What an HTTP system received: the method, the path and query exactly as written on the request
 * line, and the hash of the body's bytes (UTF-8, as the client writes them).
 */
export const httpBindingOf = (request: Pick<OutboundRequest, 'method' | 'url' | 'body'>): HttpBinding => {
  const url = new URL(request.url);
  return {
    method: request.method,
    path: `${url.pathname}${url.search}`,
    body_sha256:
      request.body === null ? null : createHash('sha256').update(Buffer.from(request.body, 'utf8')).digest('base64url'),
  };
};

/** The receipt's claims for an approved call about to be sent, signed now by the gateway at `issuer`. */
/** A receipt's issuer: the gateway's public base URL, without a trailing slash (what systems check `iss` against). */
export const receiptIssuerOf = (base: string): string => base.replace(/\/+$/, '');

const receiptClaims = (
  execution: Execution,
  issuer: string,
  nowMs: number,
  http: HttpBinding | null,
): ReceiptClaims => {
  const iat = Math.floor(nowMs / 1000);
  return {
    iss: receiptIssuerOf(issuer),
    sub: execution.agent_id,
    jti: execution.execution_id,
    iat,
    exp: iat + receiptLifetimeSeconds,
    tool: execution.tool,
    args_sha256: execution.arguments_hash ?? '',
    approvals: approvalsOf(execution),
    ...(http === null ? {} : { http }),
  };
};

/** Signs the receipt of an approved call: a compact JWS the system and the agent can check. */
export const signReceipt = (
  signer: ReceiptSigner,
  execution: Execution,
  issuer: string,
  nowMs: number,
  http: HttpBinding | null,
): Promise<string> => signer.sign(receiptClaims(execution, issuer, nowMs, http));
