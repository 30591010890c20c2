// Loaded into the reference MCP server's process before it starts. It listens on a bare port, which
// Node binds on every interface, so a listen without a host is bound to loopback instead; and it
// ends with the gateway that started it (its standard input closes when the gateway goes, even
// when the gateway is killed), so no server is left behind.
import { Server } from 'node:net';

const listen = Server.prototype.listen;
Object.defineProperty(Server.prototype, 'listen', {
  configurable: true,
  writable: true,
  value: function listenOnLoopback(this: Server, ...args: unknown[]) {
    const port = args[0];
    if (typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port))) {
      if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
    }
    return Reflect.apply(listen, this, args);
  },
});

process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
