import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** RSA key pair from Node's native generator (node-forge's pure-JS one takes seconds). */
export function generateRsaKeyPem(bits: number): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: bits, publicExponent: 0x10001 });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** A positive 128-bit serial number as hex, as the CA/B baseline asks (>= 64 random bits). */
export function randomSerialHex(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  if (bytes[0] === 0) bytes[0] = 1;
  return bytes.toString('hex');
}

/** Writes atomically (temp file + rename) with the given mode, creating the folder (0700). */
export function writeFileAtomic(path: string, data: string | Buffer, mode: number): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

export function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}
