// The console's form bodies, read in one place: only urlencoded forms, at most 16 KB, whether API
// Gateway passed the body as text or base64.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { eventBody } from '../commons/http-event.js';

/** Far above any console form (a rejection's reason is at most 500 characters). */
const maxFormBytes = 16 * 1024;

/** The posted fields: empty without a body, null when the body is too large or not a form. */
export const readForm = (event: APIGatewayProxyEventV2): URLSearchParams | null => {
  const body = eventBody(event);
  if (body === undefined) return new URLSearchParams();
  if (body.length > maxFormBytes) return null;
  const type = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return null;
  return new URLSearchParams(body.toString('utf8'));
};
