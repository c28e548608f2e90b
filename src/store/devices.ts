import type { Db } from './db.js';

/** Enrolled devices. The portal creates them; DNS and captive probes ask whether an address is one. */
export class DeviceRepository {
  constructor(private readonly db: Db) {}

  async isEnrolledIp(clientIp: string): Promise<boolean> {
    const row = await this.db.get('SELECT 1 AS x FROM devices WHERE client_ip = ? AND removed_at IS NULL LIMIT 1', [clientIp]);
    return !!row;
  }
}
