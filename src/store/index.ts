import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Db } from './db.js';
import { migrate } from './migrations.js';
import { FlowRepository } from './flows.js';
import { AdminRepository } from './admins.js';
import { SessionRepository } from './sessions.js';
import { DeviceRepository } from './devices.js';
import { DnsLookupRepository } from './dns-lookups.js';
import { PortalSettingsRepository } from './portal-settings.js';
import { OtpRepository } from './otp.js';
import { SsoLoginRepository } from './sso-logins.js';
import { DeliveryRepository } from './deliveries.js';

export type { FlowRecord, FlowQuery } from './flows.js';
export type { Admin } from './admins.js';
export type { AdminSession } from './sessions.js';
export type { DnsLookup } from './dns-lookups.js';
export type { Device, NewDevice, Replaces } from './devices.js';
export type { PortalSettings, PortalSettingsUpdate } from './portal-settings.js';
export type { OtpChallenge } from './otp.js';
export type { SsoLogin } from './sso-logins.js';
export type { Delivery, DeliveryAttempt, DeliveryKind, DeliveryState, NewDelivery, AttemptRecord } from './deliveries.js';
export { SCHEMA_VERSION } from './migrations.js';
export { BatchWriter, type BatchSink } from './batch-writer.js';
export type { DeliveryRepository } from './deliveries.js';

export interface Store {
  file: string;
  flows: FlowRepository;
  admins: AdminRepository;
  sessions: SessionRepository;
  devices: DeviceRepository;
  dnsLookups: DnsLookupRepository;
  portalSettings: PortalSettingsRepository;
  otp: OtpRepository;
  ssoLogins: SsoLoginRepository;
  deliveries: DeliveryRepository;
  close(): Promise<void>;
}

/** Opens (creating if needed) the appliance database in dataDir, in WAL mode, migrated. */
export async function openStore(dataDir: string): Promise<Store> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, 'gateway.db');
  const db = await Db.open(file);
  try {
    chmodSync(file, 0o600);
    await db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;');
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return {
    file,
    flows: new FlowRepository(db),
    admins: new AdminRepository(db),
    sessions: new SessionRepository(db),
    devices: new DeviceRepository(db),
    dnsLookups: new DnsLookupRepository(db),
    portalSettings: new PortalSettingsRepository(db),
    otp: new OtpRepository(db),
    ssoLogins: new SsoLoginRepository(db),
    deliveries: new DeliveryRepository(db),
    close: () => db.close(),
  };
}
