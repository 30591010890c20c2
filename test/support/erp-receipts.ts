// Purchase orders sent straight to a demo ERP with its key, as someone holding a leaked key would
// send them, and receipts tampered with after signing: what the ERP's receipt check must refuse.
import { createHash } from 'node:crypto';
import { demoErpApiKey } from '../../examples/erp/server.js';

/** The base64url SHA-256 of a body's bytes, as a receipt's `http.body_sha256` names them. */
export const bodySha256 = (body: string): string => createHash('sha256').update(body).digest('base64url');

/** A purchase order posted to the ERP with its API key, and the receipt if one is given. */
export const orderToErp = async (erpUrl: string, body: string, receipt?: string, path = '/purchase-orders') => {
  const response = await fetch(`${erpUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': demoErpApiKey,
      ...(receipt === undefined ? {} : { 'approval-receipt': receipt }),
    },
    body,
  });
  return { status: response.status, body: await response.json() };
};

/** The receipt with its claims changed after signing, its header and signature kept. */
export const tamperedReceipt = (receipt: string, change: (claims: { http: { body_sha256: string } }) => void) => {
  const [header, claims = '', signature] = receipt.split('.');
  const changed = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8'));
  change(changed);
  return `${header}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`;
};
