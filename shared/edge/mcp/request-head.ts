// One HTTP request as the MCP endpoint reads it: its method and headers, and the web-standard
// Request the SDK takes, built only when the SDK serves the request. An edge that holds the request
// in another form (API Gateway's event) answers a plain tools/call without ever building one.
export interface McpRequestHead {
  /** The method, upper-case. */
  readonly method: string;
  /** A header's value as a web Request's `headers.get` gives it; null when absent. */
  header(name: string): string | null;
  /** The request as the SDK takes it: built on first need, the same one after. */
  web(): Request;
}

/** A web Request as the endpoint reads it. */
export const requestHeadOf = (request: Request): McpRequestHead => ({
  method: request.method,
  header: (name) => request.headers.get(name),
  web: () => request,
});
