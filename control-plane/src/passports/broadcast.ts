/**
 * POST /passports/{id}/publish: broadcasts an approved or published passport to external registries.
 * A connector is an HTTP endpoint configured by the operator (REGISTRY_CONNECTORS); each receives one
 * POST of the passport JSON. Unlike the service api-v2.md describes, the `registries` selection is
 * honoured: only the chosen registries receive it.
 */
import { randomUUID } from 'node:crypto';
import { recordAudit } from '../audit/index.js';
import type { RegistryName } from '../config/index.js';
import { ApiError } from '../http/index.js';
import type { Db } from '../store/index.js';
import { digitalLinkOf } from './content.js';
import type { PassportWriteContext } from './publish.js';
import { appendLog, getPassport, getVersionById, productExists } from './queries.js';
import { versionView } from './views.js';

/** Command states a passport can be broadcast from (api-v2.md: "an approved or published passport"). */
export const BROADCASTABLE_STATES = ['approved', 'published'] as const;

export interface BroadcastDeps {
  db: Db;
  connectors: Partial<Record<RegistryName, string>>;
  publicBaseUrl: string;
  timeoutMs?: number;
}

export interface BroadcastInput {
  registries?: RegistryName[] | undefined;
  passportData?: Record<string, unknown> | undefined;
}

export interface RegistryResult {
  registry: RegistryName;
  status: 'accepted' | 'failed';
  httpStatus: number | null;
  error: string | null;
}

async function send(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ httpStatus: number | null; error: string | null }> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer().catch(() => undefined);
    return { httpStatus: res.status, error: res.ok ? null : `the registry answered ${res.status}` };
  } catch (err) {
    return { httpStatus: null, error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The checks, in order: the passport's product exists (404); the sandbox never has a connector, and the
 * chosen registries must all be configured (503 REGISTRY_UNAVAILABLE, nothing sent); the passport is
 * approved or published, not voided, with content to send (422 PASSPORT_NOT_PUBLISHABLE). Then one POST
 * per chosen registry, in parallel; each answer is reported and recorded.
 */
export async function broadcastPassport(
  deps: BroadcastDeps,
  ctx: PassportWriteContext & { sandbox: boolean },
  productId: string,
  input: BroadcastInput,
) {
  const { db } = deps;
  if (!(await productExists(db, ctx.tenantId, productId))) throw ApiError.notFound('Passport');
  const configured = Object.keys(deps.connectors) as RegistryName[];
  if (ctx.sandbox || configured.length === 0) {
    throw new ApiError(
      'REGISTRY_UNAVAILABLE',
      ctx.sandbox
        ? 'No registry connector is configured in the sandbox'
        : 'No registry connector is configured',
      {
        details: { sandbox: ctx.sandbox, configured: ctx.sandbox ? [] : configured },
      },
    );
  }
  const chosen = input.registries ? [...new Set(input.registries)] : configured;
  const unavailable = chosen.filter((r) => deps.connectors[r] === undefined);
  if (unavailable.length > 0) {
    throw new ApiError(
      'REGISTRY_UNAVAILABLE',
      `No connector is configured for ${unavailable.join(', ')}; nothing was sent`,
      {
        details: { unavailable, configured },
      },
    );
  }
  const passport = await getPassport(db, ctx.tenantId, productId);
  const product = await db
    .selectFrom('products')
    .select(['voided_at', 'gtin', 'serial_number'])
    .where('id', '=', productId)
    .executeTakeFirstOrThrow();
  const version = passport?.current_version_id
    ? await getVersionById(db, passport.current_version_id)
    : undefined;
  const publishable =
    passport !== undefined &&
    (BROADCASTABLE_STATES as readonly string[]).includes(passport.state) &&
    product.voided_at === null &&
    (version !== undefined || input.passportData !== undefined);
  if (!publishable) {
    throw new ApiError(
      'PASSPORT_NOT_PUBLISHABLE',
      `Only an approved or published passport can be broadcast; this one is ${passport?.state ?? 'not generated'}`,
      {
        details: {
          state: passport?.state ?? null,
          publishableStates: BROADCASTABLE_STATES,
          voided: product.voided_at !== null,
          hasVersion: version !== undefined,
        },
      },
    );
  }
  const broadcastId = randomUUID();
  const at = new Date(ctx.now()).toISOString();
  const passportJson = input.passportData ?? versionView(version!, passport!.current_version);
  const results: RegistryResult[] = await Promise.all(
    chosen.map(async (registry) => {
      const body = {
        registry,
        broadcastId,
        passportUid: productId,
        digitalLink: digitalLinkOf(deps.publicBaseUrl, product.gtin, product.serial_number),
        version: version?.version ?? null,
        hash: version?.hash ?? null,
        sentAt: at,
        passport: passportJson,
      };
      const r = await send(
        deps.connectors[registry]!,
        body,
        { 'X-DPP-Broadcast-Id': broadcastId },
        deps.timeoutMs ?? 10_000,
      );
      return {
        registry,
        status: r.error === null ? 'accepted' : 'failed',
        httpStatus: r.httpStatus,
        error: r.error,
      };
    }),
  );
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('registry_broadcasts')
      .values({
        id: broadcastId,
        tenant_id: ctx.tenantId,
        product_id: productId,
        registries: JSON.stringify(chosen),
        results: JSON.stringify(results),
        created_at: at,
      })
      .execute();
    await appendLog(trx, {
      tenantId: ctx.tenantId,
      productId,
      type: 'REGISTRY_BROADCAST',
      data: { broadcastId, results, overridden: input.passportData !== undefined },
      correlationId: ctx.correlationId,
      at,
    });
    await recordAudit(trx, {
      tenantId: ctx.tenantId,
      actor: ctx.actor,
      action: 'passport.registry_broadcast',
      resource: { type: 'passport', id: productId },
      correlationId: ctx.correlationId,
      details: {
        broadcastId,
        registries: chosen,
        accepted: results.filter((r) => r.status === 'accepted').length,
      },
      at,
    });
  });
  return {
    passportUid: productId,
    broadcastId,
    broadcastAt: at,
    registries: chosen,
    accepted: results.filter((r) => r.status === 'accepted').length,
    failed: results.filter((r) => r.status === 'failed').length,
    results,
  };
}
