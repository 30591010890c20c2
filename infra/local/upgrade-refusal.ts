// Refusing an HTTP upgrade before it happens: the socket has left Node's HTTP machinery, so the
// answer (status, headers, body) is written as HTTP/1.1 by hand and the connection closed.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

export const refuseUpgrade = async (socket: Duplex, response: Response): Promise<void> => {
  const body = Buffer.from(await response.arrayBuffer());
  const head = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`];
  // Headers holds no CR or LF in a value (it refuses them), so each line stays one line.
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'connection') head.push(`${name}: ${value}`);
  });
  head.push(`content-length: ${body.length}`, 'connection: close', '', '');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // Closed once written, as the ws package closes a refused handshake.
  socket.once('finish', () => socket.destroy());
  socket.end(Buffer.concat([Buffer.from(head.join('\r\n'), 'latin1'), body]));
};
