// The console's addresses, shared by its pages, its function and the links notices carry.
export const consolePaths = {
  home: '/console',
  signIn: '/console/sign-in',
  callback: '/console/callback',
  signOut: '/console/sign-out',
  execution: (id: string) => `/console/executions/${id}`,
  decision: (id: string) => `/console/executions/${id}/decision`,
} as const;

/** The console page of one call, under a public base URL (a trailing slash is fine). */
export const consoleLink = (baseUrl: string, executionId: string): string =>
  `${baseUrl.replace(/\/+$/, '')}${consolePaths.execution(executionId)}`;
