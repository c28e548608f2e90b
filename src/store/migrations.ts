import type { Db } from './db.js';

/**
 * Schema versions, applied in order at start. Never edit a released entry: add a new one.
 * PRAGMA user_version records how far a database has come.
 */
const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'flows, admins, sessions',
    sql: `
      CREATE TABLE flows (
        id INTEGER PRIMARY KEY,
        started_at INTEGER NOT NULL,      -- ms since epoch
        client_ip TEXT NOT NULL,
        client_port INTEGER NOT NULL,
        sni TEXT,
        route TEXT NOT NULL,              -- terminate | passthrough | intercept | reject
        destination TEXT,                 -- host:port actually connected to
        bytes_up INTEGER NOT NULL,        -- client -> destination
        bytes_down INTEGER NOT NULL,      -- destination -> client
        duration_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL             -- ok | hello-timeout | bad-hello | resolve-failed | connect-failed | ...
      );
      CREATE INDEX flows_started ON flows(started_at);
      CREATE INDEX flows_sni ON flows(sni, started_at);
      CREATE TABLE admins (
        id INTEGER PRIMARY KEY,
        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE admin_sessions (
        token_hash TEXT PRIMARY KEY,      -- sha256 of the cookie value; the value itself is never stored
        admin_id INTEGER NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        client_ip TEXT
      );
      CREATE INDEX admin_sessions_expiry ON admin_sessions(expires_at);
    `,
  },
  {
    version: 2,
    name: 'devices, dns lookups',
    sql: `
      CREATE TABLE devices (
        id INTEGER PRIMARY KEY,
        tenant_id TEXT NOT NULL DEFAULT 'default',
        client_ip TEXT NOT NULL,
        mac TEXT,
        identity TEXT,
        identity_mode TEXT,
        enrolled_at INTEGER NOT NULL,
        removed_at INTEGER
      );
      CREATE INDEX devices_ip ON devices(client_ip) WHERE removed_at IS NULL;
      CREATE TABLE dns_lookups (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        client_ip TEXT NOT NULL,
        tenant_id TEXT,
        name TEXT NOT NULL,
        qtype TEXT NOT NULL,
        service TEXT NOT NULL,   -- the AI service of the catalog the name belongs to
        transport TEXT NOT NULL, -- udp | tcp | doh
        steered INTEGER NOT NULL -- 1 when answered with the gateway address
      );
      CREATE INDEX dns_lookups_at ON dns_lookups(at);
      CREATE INDEX dns_lookups_client ON dns_lookups(client_ip, at);
    `,
  },
  {
    version: 3,
    name: 'tenants, enrollment portal, admission outbox',
    sql: `
      ALTER TABLE admins ADD COLUMN tenant_id TEXT;       -- NULL: an appliance admin, who sees every tenant
      ALTER TABLE devices ADD COLUMN device_key TEXT;     -- sha256 naming the device to the customer's NAC
      ALTER TABLE devices ADD COLUMN handoff TEXT;        -- JSON: what the Wi-Fi controller told the portal
      ALTER TABLE devices ADD COLUMN user_agent TEXT;
      ALTER TABLE devices ADD COLUMN removed_by TEXT;
      CREATE INDEX devices_tenant ON devices(tenant_id, enrolled_at);
      CREATE TABLE portal_settings (
        tenant_id TEXT PRIMARY KEY,
        identity_mode TEXT NOT NULL,
        allowed_domains TEXT NOT NULL,    -- JSON array
        webhook_url TEXT,
        webhook_secret TEXT,              -- an HMAC key must be usable, so it is kept; never shown again
        branding TEXT NOT NULL,           -- JSON {name, color, welcome}
        logo BLOB,
        logo_type TEXT,
        updated_at INTEGER NOT NULL,
        updated_by TEXT
      );
      CREATE TABLE otp_challenges (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        email TEXT NOT NULL,
        code_hash TEXT NOT NULL,          -- sha256(id:code); the code itself is only in the mail
        client_ip TEXT NOT NULL,
        handoff TEXT,
        user_agent TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        last_sent_at INTEGER NOT NULL,
        sends INTEGER NOT NULL DEFAULT 1,
        attempts INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'open'  -- open | used | locked
      );
      CREATE INDEX otp_email ON otp_challenges(tenant_id, email, created_at);
      CREATE INDEX otp_client ON otp_challenges(client_ip, created_at);
      CREATE TABLE sso_logins (
        state TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        code_verifier TEXT NOT NULL,
        nonce TEXT NOT NULL,
        client_ip TEXT NOT NULL,
        handoff TEXT,
        user_agent TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE deliveries (
        id TEXT PRIMARY KEY,              -- also the delivery id header receivers de-duplicate by
        tenant_id TEXT NOT NULL,
        device_id INTEGER,
        kind TEXT NOT NULL,               -- webhook | coa | disconnect
        target TEXT NOT NULL,             -- URL, or NAS address:port
        payload TEXT NOT NULL,            -- the webhook body, or the CoA attributes as JSON
        state TEXT NOT NULL,              -- pending | delivered | failed | gone
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        last_error TEXT,
        last_result TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        finished_at INTEGER
      );
      CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE state = 'pending';
      CREATE INDEX deliveries_tenant ON deliveries(tenant_id, created_at);
      CREATE TABLE delivery_attempts (
        id INTEGER PRIMARY KEY,
        delivery_id TEXT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
        at INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT,
        duration_ms INTEGER NOT NULL
      );
      CREATE INDEX delivery_attempts_delivery ON delivery_attempts(delivery_id, at);
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

export async function migrate(db: Db): Promise<{ from: number; to: number }> {
  const row = await db.get<{ user_version: number }>('PRAGMA user_version');
  const from = row?.user_version ?? 0;
  if (from > SCHEMA_VERSION) {
    throw new Error(
      `database schema version ${from} is newer than this gatewayd understands (${SCHEMA_VERSION}); upgrade gatewayd or restore a matching backup`,
    );
  }
  for (const m of MIGRATIONS) {
    if (m.version <= from) continue;
    await db.transaction(async (tx) => {
      await tx.exec(m.sql);
      await tx.exec(`PRAGMA user_version = ${m.version}`);
    });
  }
  return { from, to: SCHEMA_VERSION };
}
