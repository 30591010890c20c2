// Whether a POST came from a page of this console, in one place: the browser's own word on where
// the request came from (Sec-Fetch-Site, Origin), and the CSRF token the page's form carried.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { safeEqual } from '../../shared/console/session.js';

/** Same origin as far as the browser says (an old browser that says nothing passes on its token). */
const sameOrigin = (event: APIGatewayProxyEventV2, base: string): boolean => {
  const origin = event.headers.origin;
  const site = event.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  // An opaque origin passes only when the browser itself says the request is same-origin.
  if (origin === 'null') return site === 'same-origin';
  return origin === undefined || origin === base;
};

/** A form posted from a page of this console: same origin, carrying the expected CSRF token. */
export const fromThisConsole = (
  event: APIGatewayProxyEventV2,
  base: string,
  fields: URLSearchParams | null,
  token: string,
): fields is URLSearchParams =>
  fields !== null && sameOrigin(event, base) && safeEqual(fields.get('csrf') ?? '', token);
