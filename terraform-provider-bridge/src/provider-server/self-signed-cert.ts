import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { bitString, boolean, explicit, implicit, integer, octetString, oid, sequence, set, time, utf8String } from './der.js';

export interface CertificateAndKey {
  /** DER bytes of the certificate (what the go-plugin handshake line carries). */
  der: Buffer;
  certPem: string;
  keyPem: string;
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

function name(commonName: string): Buffer {
  return sequence(
    set(sequence(oid('2.5.4.10'), utf8String('agentgw'))),
    set(sequence(oid('2.5.4.3'), utf8String(commonName))),
  );
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? sequence(oid(id), boolean(true), octetString(value)) : sequence(oid(id), octetString(value));
}

function toPem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/**
 * A self-signed ECDSA P-256 certificate for "localhost" and 127.0.0.1, usable for both ends of a TLS link.
 * Its extensions mirror the certificates go-plugin makes for AutoMTLS (CA, server and client auth), so Go's
 * verifier accepts it as its own root.
 */
export function selfSignedCertificate(validDays = 30): CertificateAndKey {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x40;
  const now = Date.now();
  const keyId = createHash('sha1').update(spki).digest();
  const extensions = sequence(
    extension('2.5.29.19', true, sequence(boolean(true))), // basicConstraints: CA
    extension('2.5.29.15', true, bitString(Buffer.from([0xac]), 2)), // keyUsage: digitalSignature, keyEncipherment, keyAgreement, keyCertSign
    extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'), oid('1.3.6.1.5.5.7.3.2'))), // serverAuth, clientAuth
    extension('2.5.29.17', false, sequence(implicit(2, Buffer.from('localhost')), implicit(7, Buffer.from([127, 0, 0, 1])))),
    extension('2.5.29.14', false, octetString(keyId)), // subjectKeyIdentifier
  );
  const tbs = sequence(
    explicit(0, integer(2)), // v3
    integer(serial),
    ECDSA_WITH_SHA256,
    name('localhost'),
    sequence(time(new Date(now - 30_000)), time(new Date(now + validDays * 86_400_000))),
    name('localhost'),
    spki,
    explicit(3, extensions),
  );
  const signature = sign('sha256', tbs, privateKey as KeyObject);
  const der = sequence(tbs, ECDSA_WITH_SHA256, bitString(signature));
  return { der, certPem: toPem('CERTIFICATE', der), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
