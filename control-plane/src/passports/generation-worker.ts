import { randomUUID } from 'node:crypto';
import { recordAudit } from '../audit/index.js';
import { ApiError, type Actor } from '../http/index.js';
import { PollingLoop } from '../workers/index.js';
import type { Logger } from '../logging/logger.js';
import { LeaseLost, retryDelay } from '../queue/index.js';
import { getProductForUpdate } from '../products/index.js';
import type { SchemaRegistry } from '../schemas/index.js';
import type { Db, PassportGenerationTable, ProductTable, SecretBox } from '../store/index.js';
import type { Sections } from './content.js';
import {
  GENERATION_STAGES,
  claimGeneration,
  finishGeneration,
  recordStages,
  releaseGeneration,
  type GenerationError,
  type Lease,
  type StageName,
  type StageRecord,
} from './generation-store.js';
import { localSigner, type CredentialSigner } from './issuer.js';
import {
  assembleContent,
  checkSchema,
  confirmCredential,
  loadProduct,
  resolveCredentials,
  signCredential,
  statusPath,
  type GenerationOptions,
  type PipelineDeps,
  type Warning,
} from './pipeline.js';
import { appendLog, getPassportForUpdate, parseSections } from './queries.js';

export interface GenerationWorkerOptions {
  db: Db;
  secrets: SecretBox;
  registry: SchemaRegistry;
  publicBaseUrl: string;
  log: Logger;
  now?: () => number;
  /** Signs passport credentials; the local did:key signer unless another is handed in. */
  signer?: CredentialSigner;
  pollMs?: number;
  leaseMs?: number;
  /** Claims of one request before an unexpected fault fails it. */
  maxAttempts?: number;
}

export type GenerationRunResult = 'idle' | 'succeeded' | 'failed' | 'retry' | 'yielded';

const RETRY_AFTER_MS = [500, 2_000, 10_000];

/**
 * Runs queued generation requests through the six stages. Progress (each stage's status and times) is
 * written as it happens, fenced by the lease; the last stage writes the passport and finishes the request
 * in one transaction. A typed failure ends the request as `failed` with its error; an unexpected fault
 * (the store went away) hands it back to be retried, up to `maxAttempts` claims.
 */
export class GenerationWorker {
  private readonly now: () => number;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  private readonly deps: PipelineDeps;
  private readonly loop: PollingLoop;

  constructor(private readonly opts: GenerationWorkerOptions) {
    this.now = opts.now ?? Date.now;
    this.pollMs = opts.pollMs ?? 500;
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.maxAttempts = opts.maxAttempts ?? 3;
    this.deps = {
      db: opts.db,
      secrets: opts.secrets,
      registry: opts.registry,
      signer: opts.signer ?? localSigner,
      publicBaseUrl: opts.publicBaseUrl,
      now: this.now,
    };
    this.loop = new PollingLoop({
      name: 'generation',
      pollMs: this.pollMs,
      log: opts.log,
      pass: async () => ((await this.runOnce()) === 'idle' ? 'idle' : 'worked'),
    });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** A request was queued: look now instead of at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  /** Claims one due request and runs it to its end. */
  async runOnce(): Promise<GenerationRunResult> {
    const owner = randomUUID();
    const job = await claimGeneration(this.opts.db, { now: this.now(), leaseMs: this.leaseMs, owner });
    if (!job) return 'idle';
    const lease = { id: job.id, owner };
    const log = this.opts.log.child({ generation: job.id, tenant: job.tenant_id, product: job.product_id });
    const run = new StageRun(job, lease, this.opts.db, this.now, this.leaseMs);
    try {
      await this.pipeline(job, run);
      log.info('passport generated');
      return 'succeeded';
    } catch (err) {
      if (err instanceof LeaseLost) {
        log.warn('generation lease lost to another worker');
        return 'yielded';
      }
      if (err instanceof ApiError) {
        await run.fail(err);
        log.info({ code: err.code }, 'passport generation failed');
        return 'failed';
      }
      if (job.attempts >= this.maxAttempts) {
        await run.fail(
          new ApiError('INTERNAL_ERROR', `Generation gave up after ${job.attempts} attempts`, { cause: err }),
        );
        log.error({ err }, 'passport generation failed');
        return 'failed';
      }
      const delay = retryDelay(RETRY_AFTER_MS, job.attempts);
      log.error({ err, attempts: job.attempts }, 'passport generation interrupted; will retry');
      await releaseGeneration(this.opts.db, lease, new Date(this.now() + delay).toISOString());
      return 'retry';
    }
  }

  private async pipeline(job: PassportGenerationTable, run: StageRun): Promise<void> {
    const options = JSON.parse(job.options) as GenerationOptions;
    const product = await run.stage('load_product', () => loadProduct(this.deps, job));
    await run.stage('check_schema', async () => {
      const checked = checkSchema(this.deps, product, options);
      run.warnings.push(...checked.warnings);
    });
    const anchored = await run.stage('resolve_credentials', () => resolveCredentials(this.deps, product));
    const assembled = await run.stage('assemble_content', async () =>
      assembleContent(this.deps, product, anchored, options),
    );
    const { key, credential } = await run.stage('sign_credential', () =>
      signCredential(this.deps, job, product, assembled),
    );
    await run.begin('persist_passport');
    confirmCredential(job, key, credential, assembled);
    await this.opts.db.transaction().execute(async (trx) => {
      await persistPassport(trx, { job, product, sections: assembled.sections, credential, at: this.now() });
      const result = {
        passportUid: product.id,
        issuer: key.did,
        credentialId: credential.id,
        contentHash: assembled.contentHash,
        merkleRoot: assembled.merkleRoot,
        sections: Object.keys(assembled.sections).sort(),
      };
      if (!(await run.succeed(trx, result))) throw new LeaseLost('passport_generations', job.id);
    });
  }
}

/** The progress of one claimed request: each stage's status and times, written as they change. */
class StageRun {
  readonly stages: StageRecord[];
  readonly warnings: Warning[];
  private current: StageName = 'load_product';

  constructor(
    private readonly job: PassportGenerationTable,
    private readonly lease: Lease,
    private readonly db: Db,
    private readonly now: () => number,
    private readonly leaseMs: number,
  ) {
    // A retried request starts over: the stages are pure up to the last one's transaction.
    this.stages = GENERATION_STAGES.map((s) => ({
      name: s.name,
      status: 'pending',
      startedAt: null,
      finishedAt: null,
    }));
    this.warnings = [];
  }

  private record(name: StageName): StageRecord {
    return this.stages.find((s) => s.name === name)!;
  }

  private async save(): Promise<void> {
    const ok = await recordStages(this.db, this.lease, {
      stage: this.current,
      stages: this.stages,
      warnings: this.warnings,
      now: this.now(),
      leaseMs: this.leaseMs,
    });
    if (!ok) throw new LeaseLost('passport_generations', this.lease.id);
  }

  async begin(name: StageName): Promise<void> {
    this.current = name;
    Object.assign(this.record(name), { status: 'running', startedAt: new Date(this.now()).toISOString() });
    await this.save();
  }

  async stage<T>(name: StageName, fn: () => Promise<T>): Promise<T> {
    await this.begin(name);
    const value = await fn();
    Object.assign(this.record(name), { status: 'succeeded', finishedAt: new Date(this.now()).toISOString() });
    return value;
  }

  async succeed(trx: Db, result: Record<string, unknown>): Promise<boolean> {
    Object.assign(this.record(this.current), {
      status: 'succeeded',
      finishedAt: new Date(this.now()).toISOString(),
    });
    return finishGeneration(trx, this.lease, {
      status: 'succeeded',
      stage: this.current,
      stages: this.stages,
      warnings: this.warnings,
      error: null,
      result,
      now: this.now(),
    });
  }

  async fail(err: ApiError): Promise<void> {
    const at = new Date(this.now()).toISOString();
    const failed = this.record(this.current);
    Object.assign(failed, {
      status: 'failed',
      finishedAt: at,
      error: { code: err.code ?? 'INTERNAL_ERROR', message: err.message },
    });
    for (const s of this.stages) if (s.status === 'pending') s.status = 'skipped';
    const error: GenerationError = {
      code: err.code ?? 'INTERNAL_ERROR',
      message: err.message,
      details: { ...err.details, status: statusPath(this.job.id), stage: this.current },
    };
    await finishGeneration(this.db, this.lease, {
      status: 'failed',
      stage: this.current,
      stages: this.stages,
      warnings: this.warnings,
      error,
      result: null,
      now: this.now(),
    });
  }
}

/**
 * Stage 6 (second half), in one transaction: the product must be exactly as stage 1 read it (else the
 * issued content is stale: ISSUANCE_NOT_CONFIRMED); the passport is created in draft, or its
 * product-derived sections are replaced (sections added by EDIT or publish updates are kept).
 */
export async function persistPassport(
  trx: Db,
  p: {
    job: PassportGenerationTable;
    product: ProductTable;
    sections: Sections;
    credential: Record<string, unknown>;
    at: number;
  },
): Promise<void> {
  const { job, product } = p;
  const at = new Date(p.at).toISOString();
  const current = await getProductForUpdate(trx, job.tenant_id, job.product_id);
  if (
    !current ||
    current.version !== product.version ||
    current.voided_at !== null ||
    current.stage !== 'ready_for_dpp'
  ) {
    throw new ApiError(
      'ISSUANCE_NOT_CONFIRMED',
      'The product changed while the passport was generated; nothing was issued',
      {
        details: {
          status: statusPath(job.id),
          requestId: job.id,
          issued: false,
          reason: 'product_changed',
          readVersion: product.version,
          currentVersion: current?.version ?? null,
        },
      },
    );
  }
  const existing = await getPassportForUpdate(trx, job.tenant_id, job.product_id);
  const generated = {
    generated_at: at,
    generation_request_id: job.id,
    generated_credential: JSON.stringify(p.credential),
    generated_product_version: product.version,
    updated_at: at,
  };
  if (existing) {
    const content = { ...parseSections(existing.content), ...p.sections };
    await trx
      .updateTable('passports')
      .set({ ...generated, content: JSON.stringify(content) })
      .where('product_id', '=', job.product_id)
      .execute();
  } else {
    await trx
      .insertInto('passports')
      .values({
        product_id: job.product_id,
        tenant_id: job.tenant_id,
        state: 'draft',
        disclosure_tier: 'public',
        content: JSON.stringify(p.sections),
        section_tiers: '{}',
        current_version: 0,
        current_version_id: null,
        current_hash: null,
        first_published_at: null,
        successor_id: null,
        state_changed_at: at,
        created_at: at,
        ...generated,
      })
      .execute();
  }
  const subject = p.credential.credentialSubject as Record<string, unknown>;
  await appendLog(trx, {
    tenantId: job.tenant_id,
    productId: job.product_id,
    type: 'PASSPORT_GENERATED',
    data: {
      requestId: job.id,
      credentialId: p.credential.id,
      contentHash: subject.contentHash,
      merkleRoot: subject.merkleRoot,
    },
    correlationId: job.correlation_id,
    at,
  });
  await recordAudit(trx, {
    tenantId: job.tenant_id,
    actor: { type: job.actor_type as Actor['type'], id: job.actor_id },
    action: 'passport.generated',
    resource: { type: 'passport', id: job.product_id },
    correlationId: job.correlation_id,
    details: { requestId: job.id, regenerated: existing !== undefined },
    at,
  });
}
