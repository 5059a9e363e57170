import { randomUUID } from 'node:crypto';
import { type EventType, generateWebhookSecret } from '@dpp/shared';
import { recordAudit } from '../audit/index.js';
import { ApiError, type Page, decodeCursor, encodeCursor, toPage, type Actor } from '../http/index.js';
import { type Db, type SecretBox, type WebhookEndpointTable, secretContext } from '../store/index.js';
import { checkEventTypes } from './event-types.js';
import type { WebhookUrlPolicy } from './url-policy.js';

/** Why an endpoint is disabled: by a user (PATCH enabled=false) or by the delivery worker. */
export type DisabledReason = 'disabled_by_user' | 'failing_deliveries';

export interface WebhookEndpointView {
  id: string;
  url: string;
  description: string | null;
  events: EventType[];
  enabled: boolean;
  disabledReason: DisabledReason | null;
  disabledAt: string | null;
  failingSince: string | null;
  secretRotatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AuditContext {
  actor: Actor;
  correlationId?: string | null;
}

export interface EndpointServiceDeps {
  db: Db;
  /** Seals endpoint secrets at rest (SECRETS_KEY). */
  secrets: SecretBox;
  policy: WebhookUrlPolicy;
  now?: () => number;
}

export function endpointView(row: WebhookEndpointTable): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: JSON.parse(row.events) as EventType[],
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason as DisabledReason | null,
    disabledAt: row.disabled_at,
    failingSince: row.failing_since,
    secretRotatedAt: row.secret_rotated_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Authorization before existence: another tenant's endpoint is simply not found. */
export async function findEndpoint(db: Db, tenantId: string, id: string): Promise<WebhookEndpointTable> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw ApiError.notFound('Webhook endpoint');
  return row;
}

export interface CreateEndpointInput {
  url: string;
  events: readonly string[];
  description?: string | null | undefined;
}

/** The webhook endpoints service: one transaction per command, each with its audit entry. */
export class WebhookEndpoints {
  private readonly now: () => number;

  constructor(private readonly deps: EndpointServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Creates an endpoint with a new secret, returned this once. */
  async create(
    tenantId: string,
    input: CreateEndpointInput,
    audit: AuditContext,
  ): Promise<WebhookEndpointView & { secret: string }> {
    const events = checkEventTypes(input.events);
    const url = await this.deps.policy.check(input.url);
    const at = new Date(this.now()).toISOString();
    const secret = generateWebhookSecret();
    const id = randomUUID();
    const row: WebhookEndpointTable = {
      id,
      tenant_id: tenantId,
      url,
      description: input.description ?? null,
      events: JSON.stringify(events),
      secret: this.deps.secrets.seal(secret, secretContext.webhookSecret(id)),
      secret_rotated_at: null,
      enabled: 1,
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      created_at: at,
      updated_at: at,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await trx.insertInto('webhook_endpoints').values(row).execute();
      await recordAudit(trx, {
        tenantId,
        actor: audit.actor,
        action: 'webhook_endpoint.created',
        resource: { type: 'webhook_endpoint', id: row.id },
        correlationId: audit.correlationId,
        details: { url, events },
        at,
      });
    });
    return { ...endpointView(row), secret };
  }

  async list(
    tenantId: string,
    paging: { limit: number; cursor?: string | undefined },
  ): Promise<Page<WebhookEndpointView>> {
    const after = paging.cursor ? decodeCursor(paging.cursor, 'createdAt') : undefined;
    const rows = await this.deps.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .$if(after !== undefined, (q) =>
        q.where((eb) =>
          eb.or([
            eb('created_at', '<', String(after!.value)),
            eb.and([eb('created_at', '=', String(after!.value)), eb('id', '<', after!.id)]),
          ]),
        ),
      )
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(paging.limit + 1)
      .execute();
    return toPage(rows, paging.limit, endpointView, (r) => encodeCursor('createdAt', r.created_at, r.id));
  }

  async get(tenantId: string, id: string): Promise<WebhookEndpointView> {
    return endpointView(await findEndpoint(this.deps.db, tenantId, id));
  }

  /**
   * Changes url, events, description or enabled. Re-enabling an endpoint (also one the worker
   * disabled) clears its disabled reason and failure window; its held deliveries resume.
   */
  async update(
    tenantId: string,
    id: string,
    patch: { url?: string; events?: readonly string[]; description?: string | null; enabled?: boolean },
    audit: AuditContext,
  ): Promise<WebhookEndpointView> {
    const events = patch.events ? checkEventTypes(patch.events) : undefined;
    const url = patch.url !== undefined ? await this.deps.policy.check(patch.url) : undefined;
    const at = new Date(this.now()).toISOString();
    return this.deps.db.transaction().execute(async (trx) => {
      const before = await findEndpoint(trx, tenantId, id);
      await trx
        .updateTable('webhook_endpoints')
        .set({
          ...(url !== undefined ? { url } : {}),
          ...(events !== undefined ? { events: JSON.stringify(events) } : {}),
          ...(patch.description !== undefined ? { description: patch.description } : {}),
          updated_at: at,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .execute();
      let transition: 'enabled' | 'disabled' | undefined;
      if (patch.enabled === true) {
        const res = await trx
          .updateTable('webhook_endpoints')
          .set({ enabled: 1, disabled_reason: null, disabled_at: null, failing_since: null })
          .where('id', '=', id)
          .where('enabled', '=', 0)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 1) transition = 'enabled';
      } else if (patch.enabled === false) {
        const res = await trx
          .updateTable('webhook_endpoints')
          .set({ enabled: 0, disabled_reason: 'disabled_by_user', disabled_at: at })
          .where('id', '=', id)
          .where('enabled', '=', 1)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 1) transition = 'disabled';
      }
      await recordAudit(trx, {
        tenantId,
        actor: audit.actor,
        action: transition ? `webhook_endpoint.${transition}` : 'webhook_endpoint.updated',
        resource: { type: 'webhook_endpoint', id },
        correlationId: audit.correlationId,
        details: {
          ...(url !== undefined ? { url, previousUrl: before.url } : {}),
          ...(events !== undefined ? { events } : {}),
          ...(patch.description !== undefined ? { description: patch.description } : {}),
          ...(transition === 'enabled' ? { previousDisabledReason: before.disabled_reason } : {}),
        },
        at,
      });
      return endpointView(await findEndpoint(trx, tenantId, id));
    });
  }

  /** Deletes an endpoint with its deliveries and their attempts; nothing more is sent to it. */
  async delete(tenantId: string, id: string, audit: AuditContext): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await findEndpoint(trx, tenantId, id);
      await trx
        .deleteFrom('webhook_endpoints')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .execute();
      await recordAudit(trx, {
        tenantId,
        actor: audit.actor,
        action: 'webhook_endpoint.deleted',
        resource: { type: 'webhook_endpoint', id },
        correlationId: audit.correlationId,
        details: { url: row.url },
      });
    });
  }

  /**
   * Replaces the signing secret. Every attempt signs with the endpoint's secret as read when the attempt
   * is claimed, so from the moment this commits every delivery, retries included, is signed with the new
   * secret only (api-v2.md, Webhook management).
   */
  async rotateSecret(
    tenantId: string,
    id: string,
    audit: AuditContext,
  ): Promise<WebhookEndpointView & { secret: string }> {
    const secret = generateWebhookSecret();
    const at = new Date(this.now()).toISOString();
    return this.deps.db.transaction().execute(async (trx) => {
      await findEndpoint(trx, tenantId, id);
      await trx
        .updateTable('webhook_endpoints')
        .set({
          secret: this.deps.secrets.seal(secret, secretContext.webhookSecret(id)),
          secret_rotated_at: at,
          updated_at: at,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .execute();
      await recordAudit(trx, {
        tenantId,
        actor: audit.actor,
        action: 'webhook_endpoint.secret_rotated',
        resource: { type: 'webhook_endpoint', id },
        correlationId: audit.correlationId,
        at,
      });
      return { ...endpointView(await findEndpoint(trx, tenantId, id)), secret };
    });
  }
}
