// Listening on loopback ports and closing cleanly, for every server the local runtime starts, and
// the host names they read.
import { once } from 'node:events';
import type { Server } from 'node:http';

export interface Listening<S extends Server> {
  readonly server: S;
  readonly port: number;
  close(): Promise<void>;
}

export const listen = async <S extends Server>(server: S, host: string, port: number): Promise<Listening<S>> => {
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The server is not listening on a TCP port.');
  return {
    server,
    port: address.port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
        // Requests in flight get a moment to finish; then their connections are closed too.
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      }),
  };
};

/** `host[:port]` as RFC 9112 allows it in the Host header: a name, IPv4 or bracketed IPv6, and digits. */
const hostPattern = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
export const isWellFormedHost = (host: string | undefined): host is string =>
  host !== undefined && hostPattern.test(host) && URL.canParse(`http://${host}/`);

export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);

/** A host as it appears in a URL (IPv6 in brackets); the unspecified address shows as loopback. */
export const urlHost = (host: string): string => {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
};
