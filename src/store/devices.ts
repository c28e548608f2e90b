import type { Db } from './db.js';
import { cancelForDevices, insertDelivery, type NewDelivery } from './deliveries.js';

export interface Device {
  id: number;
  tenantId: string;
  clientIp: string;
  mac: string | null;
  identity: string | null;
  identityMode: string | null;
  deviceKey: string | null;
  handoff: Record<string, string> | null;
  userAgent: string | null;
  enrolledAt: number;
  removedAt: number | null;
  removedBy: string | null;
}

export type NewDevice = Omit<Device, 'id' | 'enrolledAt' | 'removedAt' | 'removedBy'>;

/**
 * Which earlier record an enrollment replaces: the one from the same address; behind a NAT
 * (where many devices share the address) the one with the same controller-reported address;
 * or none.
 */
export type Replaces = { clientIp: string } | { handoffIp: string } | { nothing: true };

const COLUMNS = 'id, tenant_id, client_ip, mac, identity, identity_mode, device_key, handoff, user_agent, enrolled_at, removed_at, removed_by';

function toDevice(r: Record<string, any>): Device {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    clientIp: r.client_ip,
    mac: r.mac,
    identity: r.identity,
    identityMode: r.identity_mode,
    deviceKey: r.device_key,
    handoff: r.handoff ? JSON.parse(r.handoff) : null,
    userAgent: r.user_agent,
    enrolledAt: r.enrolled_at,
    removedAt: r.removed_at,
    removedBy: r.removed_by,
  };
}

/** Enrolled devices. The portal creates them; DNS and captive probes ask whether an address is one. */
export class DeviceRepository {
  constructor(private readonly db: Db) {}

  async isEnrolledIp(clientIp: string): Promise<boolean> {
    const row = await this.db.get('SELECT 1 AS x FROM devices WHERE client_ip = ? AND removed_at IS NULL LIMIT 1', [clientIp]);
    return !!row;
  }

  async activeByIp(tenantId: string, clientIp: string): Promise<Device | undefined> {
    const row = await this.db.get<Record<string, any>>(
      `SELECT ${COLUMNS} FROM devices WHERE tenant_id = ? AND client_ip = ? AND removed_at IS NULL ORDER BY id DESC LIMIT 1`,
      [tenantId, clientIp],
    );
    return row && toDevice(row);
  }

  /** Behind a NAT: the enrolled device the controller reported at this address. */
  async activeByHandoffIp(tenantId: string, ip: string): Promise<Device | undefined> {
    const row = await this.db.get<Record<string, any>>(
      `SELECT ${COLUMNS} FROM devices WHERE tenant_id = ? AND json_extract(handoff, '$.ip') = ? AND removed_at IS NULL ORDER BY id DESC LIMIT 1`,
      [tenantId, ip],
    );
    return row && toDevice(row);
  }

  /**
   * Records an enrollment and queues its admission deliveries in one transaction: once the
   * device exists, its deliveries exist too, whatever happens to the process next. A device
   * enrolling again from the same address replaces its earlier record.
   */
  async enroll(device: NewDevice, deliveries: (device: Device) => NewDelivery[], replaces: Replaces): Promise<Device> {
    return this.db.transaction(async (tx) => {
      const now = Date.now();
      // Only the earlier record of the same device address is replaced: a MAC from the
      // controller's hand-off is the client's word, and must not let one device push another out.
      const same: [string, unknown[]] | undefined =
        'clientIp' in replaces ? ['tenant_id = ? AND client_ip = ? AND removed_at IS NULL', [device.tenantId, replaces.clientIp]]
        : 'handoffIp' in replaces ? ["tenant_id = ? AND json_extract(handoff, '$.ip') = ? AND removed_at IS NULL", [device.tenantId, replaces.handoffIp]]
        : undefined;
      if (same) {
        await cancelForDevices(tx, same[0], same[1], 'the device enrolled again', now);
        await tx.run(`UPDATE devices SET removed_at = ?, removed_by = 'replaced' WHERE ${same[0]}`, [now, ...same[1]]);
      }
      const { lastID } = await tx.run(
        `INSERT INTO devices (tenant_id, client_ip, mac, identity, identity_mode, device_key, handoff, user_agent, enrolled_at)
         VALUES (?,?,?,?,?,?,?,?,?)`,
        [device.tenantId, device.clientIp, device.mac, device.identity, device.identityMode, device.deviceKey,
          device.handoff ? JSON.stringify(device.handoff) : null, device.userAgent, now],
      );
      const saved = toDevice((await tx.get<Record<string, any>>(`SELECT ${COLUMNS} FROM devices WHERE id = ?`, [lastID]))!);
      for (const d of deliveries(saved)) await insertDelivery(tx, d, now);
      return saved;
    });
  }

  /** Devices of one tenant (or of all, for an appliance admin), newest first. */
  async list(opts: { tenantId?: string; includeRemoved?: boolean; limit?: number }): Promise<Device[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (opts.tenantId !== undefined) {
      where.push('tenant_id = ?');
      params.push(opts.tenantId);
    }
    if (!opts.includeRemoved) where.push('removed_at IS NULL');
    params.push(Math.min(Math.max(opts.limit ?? 500, 1), 5000));
    const rows = await this.db.all<Record<string, any>>(
      `SELECT ${COLUMNS} FROM devices ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
      params,
    );
    return rows.map(toDevice);
  }

  async get(id: number): Promise<Device | undefined> {
    const row = await this.db.get<Record<string, any>>(`SELECT ${COLUMNS} FROM devices WHERE id = ?`, [id]);
    return row && toDevice(row);
  }

  /**
   * Ends an enrollment: the device meets the portal again, and admissions still waiting for it
   * are cancelled. Scoped by tenant when one is given.
   */
  async remove(id: number, by: string, tenantId?: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const where = `id = ? AND removed_at IS NULL ${tenantId !== undefined ? 'AND tenant_id = ?' : ''}`;
      const params = tenantId !== undefined ? [id, tenantId] : [id];
      await cancelForDevices(tx, where, params, `the device was removed by ${by}`);
      const { changes } = await tx.run(`UPDATE devices SET removed_at = ?, removed_by = ? WHERE ${where}`, [Date.now(), by, ...params]);
      return changes > 0;
    });
  }
}
