// The demo's MCP server: the MCP project's reference server (server-everything) over Streamable
// HTTP, in a child process bound to loopback. Its environment is only its port, since one of its
// tools (get-env) prints the environment; the demo configuration turns that tool off as well.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The reference server's entry (its package's bin). */
export const referenceServerEntry = require
  .resolve('@modelcontextprotocol/server-everything/package.json')
  .replace(/package\.json$/, 'dist/index.js');

/** A port free on loopback right now (the server takes its port from PORT and cannot report one it chose). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });

const loopbackPreload = fileURLToPath(new URL('./loopback.ts', import.meta.url));

export interface ReferenceMcpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:8790/mcp. */
  readonly url: string;
  /** Everything it printed so far (for tests). */
  output(): string;
  close(): Promise<void>;
}

/** Starts the reference server on loopback (port 0: any free port) and waits until it listens. */
export const startReferenceMcpServer = async (options: { readonly port: number }): Promise<ReferenceMcpServer> => {
  const port = options.port === 0 ? await freePort() : options.port;
  const child = spawn(process.execPath, ['--import', loopbackPreload, referenceServerEntry, 'streamableHttp'], {
    env: { PORT: String(port) },
    // Its standard input stays open while the gateway lives (see loopback.ts).
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    // It logs every request; what it printed is kept up to a bound.
    const collect = (chunk: Buffer) => {
      if (output.length < 64 * 1024) output += chunk.toString('utf8');
      if (output.includes('listening on port')) resolve();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    void exited.then(() => reject(new Error(`the reference MCP server stopped: ${output.slice(-500)}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    output: () => output,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
};
