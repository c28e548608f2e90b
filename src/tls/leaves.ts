import { isIP } from 'node:net';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import forge from 'node-forge';
import { LRUCache } from 'lru-cache';
import type { CertificateAuthority } from './ca.js';
import { randomSerialHex, readIfExists, writeFileAtomic } from './keys.js';

const DAY_MS = 24 * 3600e3;
/** Clients with a slow clock still accept a leaf backdated by a day. */
const BACKDATE_MS = DAY_MS;

export interface Leaf {
  certPem: string;
  keyPem: string;
  notAfter: number;
  context: SecureContext;
}

export interface LeafStats {
  memoryHits: number;
  diskHits: number;
  minted: number;
}

/**
 * Mints leaf certificates signed by the gateway CA, one per host name, all sharing one leaf key.
 * Leaves are cached in memory (LRU) and on disk under <dataDir>/leaves/<CA fingerprint>/.
 */
export class LeafService {
  private readonly memory: LRUCache<string, Leaf>;
  private readonly dir: string;
  readonly stats: LeafStats = { memoryHits: 0, diskHits: 0, minted: 0 };

  constructor(
    private readonly ca: CertificateAuthority,
    dataDir: string,
    private readonly lifetimeDays: number,
    cacheSize = 1000,
  ) {
    this.memory = new LRUCache({ max: cacheSize });
    this.dir = join(dataDir, 'leaves', ca.fingerprint.slice(0, 16));
  }

  /** A valid leaf for the name (a DNS name or an IP), extra SANs optional; renewed when a third of its life is left. */
  leafFor(name: string, extraSans: string[] = []): Leaf {
    const key = [name.toLowerCase(), ...extraSans].join(',');
    const now = Date.now();
    const renewAt = (this.lifetimeDays * DAY_MS) / 3;
    const cached = this.memory.get(key);
    if (cached && cached.notAfter - now > renewAt) {
      this.stats.memoryHits++;
      return cached;
    }
    const file = join(this.dir, `${key.replace(/[^a-z0-9.,:-]/gi, '_')}.crt.pem`);
    const onDisk = readIfExists(file);
    if (onDisk) {
      const notAfter = forge.pki.certificateFromPem(onDisk).validity.notAfter.getTime();
      if (notAfter - now > renewAt) {
        this.stats.diskHits++;
        return this.remember(key, onDisk, notAfter);
      }
    }
    const { pem, notAfter } = this.mint([name, ...extraSans], now);
    writeFileAtomic(file, pem, 0o644);
    this.stats.minted++;
    return this.remember(key, pem, notAfter);
  }

  private remember(key: string, certPem: string, notAfter: number): Leaf {
    const leaf = {
      certPem,
      keyPem: this.ca.leafKeyPem,
      notAfter,
      context: createSecureContext({ cert: certPem, key: this.ca.leafKeyPem }),
    };
    this.memory.set(key, leaf);
    return leaf;
  }

  private mint(names: string[], now: number): { pem: string; notAfter: number } {
    const cert = forge.pki.createCertificate();
    cert.publicKey = this.ca.leafPublicKey;
    cert.serialNumber = randomSerialHex();
    cert.validity.notBefore = new Date(now - BACKDATE_MS);
    cert.validity.notAfter = new Date(now + this.lifetimeDays * DAY_MS);
    cert.setSubject([{ name: 'commonName', value: names[0].slice(0, 64) }]);
    cert.setIssuer(this.ca.cert.subject.attributes);
    const altNames = names.map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n }));
    cert.setExtensions([
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
      { name: 'subjectKeyIdentifier' },
      // forge would otherwise derive the AKI from the leaf's own key; it must be the CA's SKI.
      { name: 'authorityKeyIdentifier', keyIdentifier: this.ca.subjectKeyId },
    ]);
    this.ca.sign(cert);
    return { pem: forge.pki.certificateToPem(cert), notAfter: cert.validity.notAfter.getTime() };
  }
}
