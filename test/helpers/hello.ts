import { connect as tlsConnect } from 'node:tls';
import { createServer, type AddressInfo } from 'node:net';

/** The exact bytes a real Node TLS client sends as its ClientHello for this name and ALPN list. */
export async function captureClientHello(servername: string | undefined, alpn: string[] = ['h2', 'http/1.1']): Promise<Buffer> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const got = new Promise<Buffer>((resolve) => {
    server.once('connection', (sock) => {
      let buf = Buffer.alloc(0);
      sock.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        if (buf.length >= 5 && buf.length >= 5 + buf.readUInt16BE(3)) {
          resolve(buf);
          sock.destroy();
        }
      });
    });
  });
  const client = tlsConnect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', servername, ALPNProtocols: alpn, rejectUnauthorized: false });
  client.on('error', () => undefined);
  const hello = await got;
  client.destroy();
  server.close();
  return hello;
}

/** Re-frames a single-record ClientHello into several TLS records of at most `size` bytes each. */
export function splitIntoRecords(hello: Buffer, size: number): Buffer {
  const body = hello.subarray(5);
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) {
    const part = body.subarray(i, i + size);
    const header = Buffer.from([0x16, hello[1], hello[2], 0, 0]);
    header.writeUInt16BE(part.length, 3);
    out.push(header, part);
  }
  return Buffer.concat(out);
}
