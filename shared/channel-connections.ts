// What a front that holds /tool/call-tool connections outside the process needs (API Gateway's
// WebSocket API): a way to answer a connection and close it, and a claim that lets exactly one
// message of a connection run a call, however many the client sends and however they race.

/** Answers and closes connections the front does not hold itself. */
export interface ChannelConnections {
  /** Sends the frame; `gone` when the client has already left (nothing was delivered). */
  send(connectionId: string, frame: Uint8Array): Promise<'sent' | 'gone'>;
  /** Closes the connection; a connection already gone is closed. */
  close(connectionId: string): Promise<void>;
}

/** The once-per-connection claim, kept where every instance of the front sees it. */
export interface ConnectionClaims {
  /** True for the first claim of a connection, false for every later one. */
  claim(connectionId: string, agentId: string): Promise<boolean>;
}
