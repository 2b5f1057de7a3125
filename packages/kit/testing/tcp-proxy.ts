// A TCP proxy a test puts between a client and a shared server, to take the server away from that
// client alone: `cut()` drops every connection and refuses new ones until `restore()`. To the
// client this is the server going down and coming back; other tests using the server are untouched.
import { createConnection, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  /** Port on 127.0.0.1 the client should connect to. */
  port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let down = false;
  const server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = createConnection(target.port, target.host);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(a);
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
      a.on('error', () => b.destroy());
      a.pipe(b);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      down = true;
      cutAll();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cutAll();
        server.close(() => resolve());
      }),
  };
}
