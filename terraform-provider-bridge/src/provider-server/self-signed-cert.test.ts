import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { selfSignedCertificate } from './self-signed-cert.js';

describe('selfSignedCertificate', () => {
  it('is a valid self-signed CA certificate for localhost and 127.0.0.1', () => {
    const { certPem, der } = selfSignedCertificate();
    const x509 = new X509Certificate(certPem);
    expect(x509.raw.equals(der)).toBe(true);
    expect(x509.ca).toBe(true);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkHost('localhost')).toBe('localhost');
    expect(x509.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x509.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(new Date(x509.validFrom).getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('carries a mutual TLS handshake where each side trusts only the other certificate', async () => {
    const server = selfSignedCertificate();
    const client = selfSignedCertificate();
    const tls = createServer({ key: server.keyPem, cert: server.certPem, ca: client.certPem, requestCert: true, rejectUnauthorized: true }, (s) =>
      s.end(`hello ${(s as TLSSocket).getPeerCertificate().subject.CN}`),
    );
    tls.listen(0, '127.0.0.1');
    await once(tls, 'listening');
    const port = (tls.address() as { port: number }).port;
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: server.certPem, key: client.keyPem, cert: client.certPem });
    let text = '';
    socket.on('data', (d) => (text += d));
    await once(socket, 'end');
    expect(socket.authorized).toBe(true);
    expect(text).toBe('hello localhost');
    tls.close();
  });
});
