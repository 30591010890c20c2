// The console's addresses, shared by its pages, its function and the links notices carry.
export const consolePaths = {
  home: '/console',
  signIn: '/console/sign-in',
  callback: '/console/callback',
  signOut: '/console/sign-out',
  execution: (id: string) => `/console/executions/${id}`,
  decision: (id: string) => `/console/executions/${id}/decision`,
  /** Signing in again for a call that asks a fresher or stronger sign-in; it leads back to the call. */
  signInAgain: (id: string) => `/console/executions/${id}/sign-in-again`,
} as const;

/** The console page of one call, under a public base URL (a trailing slash is fine). */
export const consoleLink = (baseUrl: string, executionId: string): string =>
  `${baseUrl.replace(/\/+$/, '')}${consolePaths.execution(executionId)}`;

/** The customer's pages: one per call (its approval_url), signed into afresh each time. */
export const customerPaths = {
  signIn: '/customer/sign-in',
  /** Where the identity provider sends a customer back (OpenID Connect sign-in). */
  callback: '/customer/callback',
  call: (id: string) => `/customer/calls/${id}`,
  answer: (id: string) => `/customer/calls/${id}/answer`,
  /** Where an answer leads (the session ended): what happens next, from a fixed list. */
  answered: '/customer/answered',
} as const;

/** A call's approval_url under a public base URL: it names the call and carries no secret or token. */
export const customerLink = (baseUrl: string, executionId: string): string =>
  `${baseUrl.replace(/\/+$/, '')}${customerPaths.call(executionId)}`;
