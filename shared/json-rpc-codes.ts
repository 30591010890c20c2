// JSON-RPC 2.0's error codes, as the gateway's own answers use them (gRPC stream, /tool/call-tool).
export const jsonRpcCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** The range JSON-RPC leaves to servers: a limit's refusal, a wait that ended, a method not allowed. */
  serverError: -32000,
  /** A Streamable HTTP request naming a session this gateway does not know (the client initializes again). */
  sessionNotFound: -32001,
} as const;
