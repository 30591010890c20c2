// The demo ERP's check of approval receipts, as any system receiving approved calls would make it:
// a large purchase order is placed only with a receipt the gateway signed for exactly this request,
// so a leaked ERP key alone cannot place one. The signature is checked by a JWT library against the
// gateway's published keys; the ERP checks the claims that bind the receipt to what it received.
import { createHash } from 'node:crypto';
import {
  JwksValidationError,
  JwtExpiredError,
  JwtInvalidIssuerError,
  KidNotFoundInJwksError,
  WaitPeriodNotYetEndedJwkError,
} from 'aws-jwt-verify/error';
import type { Fetcher } from 'aws-jwt-verify/https';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import * as z from 'zod';

/**
 * From this amount up a purchase order needs a receipt: the figure from which the demo policy
 * (examples/policies/demo.cedar, `large-purchase-orders`) holds an order for finance.
 */
export const receiptThreshold = 1000;

/** The tool whose receipts place purchase orders. */
export const purchaseOrderTool = 'erp.purchase_orders.create';

/** Where the ERP finds the gateway: its issuer (its public base URL) and its JWK Set. */
export interface ReceiptGateway {
  readonly issuer: string;
  readonly jwksUri: string;
}

export interface ReceiptCheckOptions {
  /** The gateway, or null while it is not listening yet (the ERP starts first). Read on first use. */
  readonly gateway: () => ReceiptGateway | null;
}

/** What the ERP received, as the receipt must bind it. */
interface ReceivedRequest {
  readonly method: string;
  /** Path and query, exactly as sent. */
  readonly path: string;
  readonly receipt: string | undefined;
  readonly body: Buffer;
}

/** A refusal: 403 for a receipt that does not hold, 503 when the gateway's keys cannot be had. */
interface ReceiptRefusal {
  readonly status: 403 | 503;
  readonly code: string;
  readonly message: string;
}

const Claims = z.object({
  jti: z.string(),
  exp: z.number(),
  tool: z.string(),
  http: z.object({ method: z.string(), path: z.string(), body_sha256: z.string().nullable() }),
});

const refused = (code: string, message: string): ReceiptRefusal => ({ status: 403, code, message });

/** The gateway's keys could not be fetched: no receipt is judged. */
class KeysUnavailable extends Error {}

/** Loopback serves plain HTTP, which aws-jwt-verify's own fetcher does not speak. */
const httpFetcher: Fetcher = {
  fetch: async (uri) => {
    try {
      const response = await fetch(uri, { signal: AbortSignal.timeout(5_000), redirect: 'error' });
      if (response.status !== 200) throw new Error(`${uri} answered ${response.status}`);
      return await response.arrayBuffer();
    } catch (error) {
      throw new KeysUnavailable(String(error));
    }
  },
};

/** Whether an amount as the order carries it is plainly below the threshold; anything else needs a receipt. */
export const belowThreshold = (amount: unknown): boolean => {
  if (typeof amount === 'number') return Number.isFinite(amount) && amount < receiptThreshold;
  if (typeof amount !== 'string') return false;
  const plain = /^(-?)(\d+)(?:\.\d+)?$/.exec(amount.trim());
  if (plain === null) return false;
  return plain[1] === '-' || BigInt(plain[2] ?? '0') < BigInt(receiptThreshold);
};

/** Why the library refused the token, in the ERP's words. */
const verifyFailure = (error: unknown): ReceiptRefusal => {
  if (error instanceof KeysUnavailable || error instanceof JwksValidationError) {
    return {
      status: 503,
      code: 'receipt_keys_unavailable',
      message: "The gateway's public keys could not be fetched.",
    };
  }
  if (error instanceof JwtExpiredError) return refused('receipt_expired', 'The approval receipt has expired.');
  if (error instanceof JwtInvalidIssuerError) {
    return refused('receipt_wrong_issuer', 'The approval receipt was not issued by the gateway.');
  }
  if (error instanceof KidNotFoundInJwksError || error instanceof WaitPeriodNotYetEndedJwkError) {
    return refused('receipt_unknown_key', 'The approval receipt is signed with a key the gateway does not publish.');
  }
  return refused('receipt_invalid', 'The approval receipt is malformed or its signature does not verify.');
};

/** The claims checks that bind a verified receipt to the request received. */
const bindingFailure = (claims: z.infer<typeof Claims>, request: ReceivedRequest): ReceiptRefusal | null => {
  if (claims.tool !== purchaseOrderTool) {
    return refused('receipt_wrong_tool', `The approval receipt is for ${claims.tool}, not ${purchaseOrderTool}.`);
  }
  if (claims.http.method !== request.method || claims.http.path !== request.path) {
    return refused('receipt_wrong_request', 'The approval receipt is for another method or path.');
  }
  const bodySha256 = request.body.length === 0 ? null : createHash('sha256').update(request.body).digest('base64url');
  if (claims.http.body_sha256 !== bodySha256) {
    return refused('receipt_wrong_body', 'The approval receipt was not issued for this body.');
  }
  return null;
};

/** Receipt ids already used, each until its receipt expires: a receipt places one order. */
class UsedReceipts {
  private readonly used = new Map<string, number>();

  has(jti: string): boolean {
    return this.used.has(jti);
  }

  add(jti: string, exp: number): void {
    const now = Date.now() / 1000;
    for (const [id, until] of this.used) if (until < now) this.used.delete(id);
    this.used.set(jti, exp);
  }

  clear(): void {
    this.used.clear();
  }
}

/** Checks receipts for one ERP: the gateway's keys fetched on first use, cached, fetched again on an unknown key id. */
export const receiptCheck = (options: ReceiptCheckOptions) => {
  const jwksCache = new SimpleJwksCache({ fetcher: httpFetcher });
  const used = new UsedReceipts();
  let verifier: { readonly gateway: ReceiptGateway; readonly verify: (token: string) => Promise<unknown> } | null =
    null;
  const verifierFor = (gateway: ReceiptGateway) => {
    if (verifier?.gateway.issuer !== gateway.issuer || verifier.gateway.jwksUri !== gateway.jwksUri) {
      const jwt = JwtVerifier.create(
        {
          issuer: gateway.issuer,
          audience: null,
          jwksUri: gateway.jwksUri,
          customJwtCheck: ({ header }) => {
            if (header.alg !== 'ES256') throw new Error('not ES256');
          },
        },
        { jwksCache },
      );
      verifier = { gateway, verify: (token) => jwt.verify(token) };
    }
    return verifier;
  };
  const check = async (request: ReceivedRequest): Promise<ReceiptRefusal | null> => {
    if (request.receipt === undefined) {
      return refused('receipt_required', `A purchase order of ${receiptThreshold} or more needs an Approval-Receipt.`);
    }
    const gateway = options.gateway();
    if (gateway === null) return verifyFailure(new KeysUnavailable('the gateway is not listening yet'));
    let payload: unknown;
    try {
      payload = await verifierFor(gateway).verify(request.receipt);
    } catch (error) {
      return verifyFailure(error);
    }
    const claims = Claims.safeParse(payload);
    if (!claims.success) return refused('receipt_invalid', 'The approval receipt lacks the claims that bind it.');
    const failure = bindingFailure(claims.data, request);
    if (failure !== null) return failure;
    if (used.has(claims.data.jti)) return refused('receipt_reused', 'The approval receipt was used already.');
    used.add(claims.data.jti, claims.data.exp);
    return null;
  };
  return { check, reset: () => used.clear() };
};

export type ReceiptCheck = ReturnType<typeof receiptCheck>;
