// Whether a POST came from a page of this console, in one place: the browser's own word on where
// the request came from (Sec-Fetch-Site, Origin), and the CSRF token the page's form carried.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { safeEqual } from '../../shared/sessions/session.js';

/**
 * Same origin as the browser says it: `Sec-Fetch-Site: same-origin`, or an `Origin` that is this
 * console's. A request that says neither is refused: every current browser sends one of them with
 * a form, so only a copied cookie used outside a browser (or an old browser) goes without.
 */
const sameOrigin = (event: APIGatewayProxyEventV2, base: string): boolean => {
  const origin = event.headers.origin;
  const site = event.headers['sec-fetch-site'];
  // An opaque origin passes only when the browser itself says the request is same-origin.
  if (site !== undefined)
    return site === 'same-origin' && (origin === undefined || origin === 'null' || origin === base);
  return origin === base;
};

/** A form posted from a page of this console: same origin, carrying the expected CSRF token. */
export const fromThisConsole = (
  event: APIGatewayProxyEventV2,
  base: string,
  fields: URLSearchParams | null,
  token: string,
): fields is URLSearchParams =>
  fields !== null && sameOrigin(event, base) && safeEqual(fields.get('csrf') ?? '', token);
