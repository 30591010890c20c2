// The console's security headers, in one place: pages and redirects get the full set (the strict
// Content-Security-Policy that lets the console run no script at all), its static files only what
// a stylesheet or an icon needs.

/** No script, no frames, no foreign anything: styles and forms from the console itself. */
export const contentSecurityPolicy =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** For pages and redirects; HSTS only when the console is served over https. */
export const pageSecurityHeaders = (secure: boolean): Record<string, string> => ({
  'content-security-policy': contentSecurityPolicy,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: under it browsers send `Origin: null` even on same-origin form posts.
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  ...(secure ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
});

/** For the stylesheet and the icon, which are never rendered as documents. */
export const assetSecurityHeaders: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' };
