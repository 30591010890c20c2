// The one reading of a request's body on the local servers, over real HTTP on loopback: whole
// within the cap, refused past it (declared or not) without buffering more, bounded in its wait;
// and no local server reads a body another way.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listen } from '../../../infra/local/net.js';
import { type BodyRead, readCappedBody } from '../../../infra/local/request-body.js';
import { projectPath } from '../../../infra/paths.js';
import { verifies } from '../../support/requirements.js';

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** What the server read of one request, and the request's data listeners left after the read. */
interface Seen {
  readonly read: BodyRead;
  readonly dataListeners: number;
}

/**
 * Sends `chunks` (then ends the body, unless `hold`) to a server that reads with the cap and wait,
 * and says what it read. `declared`: the Content-Length sent (none: chunked).
 */
const readOf = async (
  chunks: readonly string[],
  options: { limitBytes: number; waitMs?: number; declared?: number; hold?: boolean },
): Promise<Seen> => {
  let seen: (value: Seen) => void = () => undefined;
  const result = new Promise<Seen>((resolve) => {
    seen = resolve;
  });
  const server = createServer((request: IncomingMessage, response) => {
    void readCappedBody(request, options.limitBytes, options.waitMs ?? null).then((read) => {
      seen({ read, dataListeners: request.listenerCount('data') });
      response.writeHead(200, { connection: 'close' }).end();
    });
  });
  servers.push(server);
  const { port } = await listen(server, '127.0.0.1', 0);
  const headers: Record<string, string | number> =
    options.declared === undefined ? { 'transfer-encoding': 'chunked' } : { 'content-length': options.declared };
  const outgoing = httpRequest({ host: '127.0.0.1', port, method: 'POST', headers });
  outgoing.on('error', () => undefined);
  outgoing.on('response', (response) => response.resume());
  for (const chunk of chunks) outgoing.write(chunk);
  if (options.hold !== true) outgoing.end();
  return result;
};

/** The local servers' and the functions' source files, as paths from the project. */
const sourceFiles = (folder: string): string[] =>
  readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (entry === 'node_modules') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [relative(projectPath(), path)] : [];
  });

describe('a request body read up to a cap', () => {
  it(verifies('code.one-capped-body-reader', 'reads a body within the cap whole, chunk by chunk'), async () => {
    const seen = await readOf(['{"a":', '1}'], { limitBytes: 7 });
    expect(seen.read).toEqual({ kind: 'read', bytes: Buffer.from('{"a":1}') });
    expect(seen.dataListeners).toBe(0);
  });

  it(
    verifies('code.one-capped-body-reader', 'refuses a body past the cap, declared or found, keeping nothing of it'),
    async () => {
      expect((await readOf(['12345678'], { limitBytes: 7, declared: 8 })).read).toEqual({ kind: 'too_large' });
      const found = await readOf(['1234', '5678'], { limitBytes: 7 });
      expect(found.read).toEqual({ kind: 'too_large' });
      expect(found.dataListeners).toBe(0);
    },
  );

  it(verifies('code.one-capped-body-reader', 'stops waiting for a body that does not end in time'), async () => {
    const seen = await readOf(['{"a":'], { limitBytes: 1024, waitMs: 50, hold: true });
    expect(seen.read).toEqual({ kind: 'late' });
    expect(seen.dataListeners).toBe(0);
  });

  it(verifies('code.one-capped-body-reader', 'is the only reading of a request body on the local servers'), () => {
    const readers = ['infra', 'functions', 'shared']
      .flatMap((folder) => sourceFiles(projectPath(folder)))
      .filter((path) => /request\.on\('data'/.test(readFileSync(projectPath(path), 'utf8')));
    expect(readers).toEqual(['infra/local/request-body.ts']);
  });
});
