import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every connection through it and refuses new ones, as a network failure would. */
  cut: () => void;
  /** Lets connections through again. */
  restore: () => void;
  /** Holds every byte both ways and keeps connections open (new ones too), as a frozen server would (SIGSTOP). */
  freeze: () => void;
  /** Hands on what was held and lets bytes through again. */
  thaw: () => void;
  close: () => Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

const link = ({ client, upstream }: Pair) => client.pipe(upstream).pipe(client);
const unlink = ({ client, upstream }: Pair) => {
  client.unpipe(upstream);
  upstream.unpipe(client);
  // Unread bytes wait in the sockets' buffers, then in the kernel's, like those sent to a stopped process.
  client.pause();
  upstream.pause();
};

/** A loopback TCP proxy to `host:port` that a test can cut and restore, or freeze and thaw. */
export async function startTcpProxy(host: string, port: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<Pair>();
  let open = true;
  let frozen = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    if (!open) return client.destroy();
    const pair = { client, upstream: connect(port, host) };
    track(client);
    track(pair.upstream);
    pairs.add(pair);
    if (frozen) unlink(pair);
    else link(pair);
    client.once('close', () => {
      pair.upstream.destroy();
      pairs.delete(pair);
    });
    pair.upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      open = true;
    },
    freeze: () => {
      frozen = true;
      pairs.forEach(unlink);
    },
    thaw: () => {
      frozen = false;
      pairs.forEach(link);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
