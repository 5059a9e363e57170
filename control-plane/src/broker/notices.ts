import { type WorkNotice, deviceTopics } from '@dpp/shared';
import type { OutboxHandler } from '../outbox/index.js';
import type { Db } from '../store/index.js';
import type { Broker } from './broker.js';

/** Outbox topic of "work available" notices. */
export const WORK_NOTICE_TOPIC = 'mqtt.work_notice';

export interface WorkNoticePayload {
  tenantId: string;
  jobRef?: string;
  queuedAt: string;
}

/**
 * Publishes a work notice to every active device of the tenant (QoS 1). A notice only says "claim now";
 * the claim is an HTTP pull, so a device that misses one loses nothing.
 */
export function workNoticeHandler(db: Db, broker: Broker): OutboxHandler {
  return async (row) => {
    const p = row.payload as WorkNoticePayload;
    const devices = await db
      .selectFrom('devices')
      .select('id')
      .where('tenant_id', '=', p.tenantId)
      .where('status', '=', 'active')
      .execute();
    const notice: WorkNotice = {
      type: 'work_available',
      tenantId: p.tenantId,
      queuedAt: p.queuedAt,
      ...(p.jobRef ? { jobRef: p.jobRef } : {}),
    };
    await Promise.all(
      devices.map((d) => broker.publish(deviceTopics(p.tenantId, d.id).workNotice, notice, { qos: 1 })),
    );
  };
}
