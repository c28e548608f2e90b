import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { hashPassword } from '../admin/index.js';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import { writeFileAtomic } from '../tls/keys.js';

/**
 * A fresh appliance has no admin. Like Grafana or Jenkins, create "admin" with a random password
 * written to a 0600 file in dataDir; the password itself never reaches the log.
 */
export async function bootstrapAdmin(store: Store, dataDir: string, log: Logger): Promise<void> {
  if ((await store.admins.count()) > 0) return;
  const password = randomBytes(18).toString('base64url');
  const file = join(dataDir, 'initial-admin-password');
  writeFileAtomic(file, `${password}\n`, 0o600);
  await store.admins.upsert('admin', await hashPassword(password));
  log.warn({ file }, 'no admin account existed: created "admin"; its password is in this file (change it with: gatewayd admin add --username admin)');
}
