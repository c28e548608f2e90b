import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { generateRsaKeyPem, randomSerialHex, readIfExists, writeFileAtomic } from './keys.js';

const CA_YEARS = 10;

/**
 * The gateway's own certificate authority. It lives in <dataDir>/ca: the CA key and the one
 * key shared by every leaf are separate files, both mode 0600.
 */
export class CertificateAuthority {
  readonly certPem: string;
  readonly cert: forge.pki.Certificate;
  readonly key: forge.pki.rsa.PrivateKey;
  /** Subject Key Identifier as raw bytes, copied into each leaf's Authority Key Identifier. */
  readonly subjectKeyId: string;
  readonly leafKeyPem: string;
  readonly leafPublicKey: forge.pki.rsa.PublicKey;
  /** SHA-256 of the DER certificate, hex: names the leaf cache so a new CA never reuses old leaves. */
  readonly fingerprint: string;

  private constructor(certPem: string, keyPem: string, leafKeyPem: string) {
    this.certPem = certPem;
    this.cert = forge.pki.certificateFromPem(certPem);
    this.key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
    const ski = this.cert.getExtension('subjectKeyIdentifier') as { subjectKeyIdentifier?: string } | null;
    this.subjectKeyId = ski?.subjectKeyIdentifier
      ? forge.util.hexToBytes(ski.subjectKeyIdentifier)
      : this.cert.generateSubjectKeyIdentifier().getBytes();
    this.leafKeyPem = leafKeyPem;
    const leafKey = forge.pki.privateKeyFromPem(leafKeyPem) as forge.pki.rsa.PrivateKey;
    this.leafPublicKey = forge.pki.setRsaPublicKey(leafKey.n, leafKey.e);
    this.fingerprint = createHash('sha256').update(this.der()).digest('hex');
  }

  static paths(dataDir: string) {
    const dir = join(dataDir, 'ca');
    return { dir, cert: join(dir, 'ca.crt.pem'), key: join(dir, 'ca.key.pem'), leafKey: join(dir, 'leaf.key.pem') };
  }

  /** Loads the CA from dataDir; returns undefined when none has been created yet. */
  static load(dataDir: string): CertificateAuthority | undefined {
    const p = CertificateAuthority.paths(dataDir);
    const certPem = readIfExists(p.cert);
    const keyPem = readIfExists(p.key);
    if (!certPem && !keyPem) return undefined;
    if (!certPem || !keyPem) {
      throw new Error(`incomplete CA in ${p.dir}: both ca.crt.pem and ca.key.pem are needed (move the folder away to create a new CA)`);
    }
    for (const file of [p.key, p.leafKey]) {
      try {
        const mode = statSync(file).mode & 0o777;
        if (mode & 0o077) throw new Error(`${file} is readable by others (mode ${mode.toString(8)}); run chmod 600 ${file}`);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    let leafKeyPem = readIfExists(p.leafKey);
    if (!leafKeyPem) {
      leafKeyPem = generateRsaKeyPem(2048);
      writeFileAtomic(p.leafKey, leafKeyPem, 0o600);
    }
    return new CertificateAuthority(certPem, keyPem, leafKeyPem);
  }

  /** Loads the CA, creating it first when dataDir has none. */
  static loadOrCreate(dataDir: string, commonName: string): { ca: CertificateAuthority; created: boolean } {
    const existing = CertificateAuthority.load(dataDir);
    if (existing) return { ca: existing, created: false };
    const p = CertificateAuthority.paths(dataDir);
    const keyPem = generateRsaKeyPem(3072);
    const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
    const cert = forge.pki.createCertificate();
    cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
    cert.serialNumber = randomSerialHex();
    const now = Date.now();
    cert.validity.notBefore = new Date(now - 24 * 3600e3);
    cert.validity.notAfter = new Date(now + CA_YEARS * 365 * 24 * 3600e3);
    const subject = [
      { name: 'commonName', value: commonName },
      { name: 'organizationName', value: 'gatewayd' },
    ];
    cert.setSubject(subject);
    cert.setIssuer(subject);
    cert.setExtensions([
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    cert.sign(key, forge.md.sha256.create());
    writeFileAtomic(p.key, keyPem, 0o600);
    writeFileAtomic(p.leafKey, generateRsaKeyPem(2048), 0o600);
    writeFileAtomic(p.cert, forge.pki.certificateToPem(cert), 0o644);
    return { ca: CertificateAuthority.load(dataDir)!, created: true };
  }

  der(): Buffer {
    return Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(this.cert)).getBytes(), 'binary');
  }

  sign(cert: forge.pki.Certificate): void {
    cert.sign(this.key, forge.md.sha256.create());
  }
}
