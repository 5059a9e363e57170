import { randomBytes } from 'node:crypto';
import { ACTIVE_STATES, type LabelTemplate } from '@dpp/shared';
import { WORK_NOTICE_TOPIC } from '../broker/index.js';
import { recordAudit } from '../audit/index.js';
import { ApiError, type Page, toPage, type Actor } from '../http/index.js';
import { enqueueOutbox } from '../outbox/index.js';
import { type Db, isUniqueViolation, type PrintJobTable } from '../store/index.js';
import {
  type AttemptView,
  type EvidenceView,
  type JobView,
  attemptView,
  evidenceView,
  jobView,
} from './model.js';
import type { PrintLoopPort } from './port.js';

export interface AidcSettings {
  leaseSeconds: number;
  maxAttempts: number;
  defaultTemplate: Omit<LabelTemplate, 'textLines'> & { textLines: string[] };
}

/** The deployment's default label: 50 x 30 mm at 203 dpi, QR magnification 4, three text lines, RFID on. */
export const DEFAULT_LABEL_TEMPLATE: AidcSettings['defaultTemplate'] = {
  id: 'default-50x30',
  widthMm: 50,
  heightMm: 30,
  dpi: 203,
  qrMagnification: 4,
  textLines: ['{productName}', 'GTIN {gtin}', 'SN {serial}'],
  rfid: true,
};

export interface CreateJobInput {
  gtin: string;
  serial: string;
  printer?: string | undefined;
  maxAttempts?: number | undefined;
  labelTemplate?: Partial<LabelTemplate> | undefined;
}

export interface ListJobsQuery {
  state?: string | undefined;
  deviceId?: string | undefined;
  serial?: string | undefined;
  gtin?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** `job_` + 20 base32 characters: sortable by creation (time prefix) and unguessable. */
export function newJobRef(now: number): string {
  const time = now.toString(32).padStart(10, '0');
  return `job_${time}${randomBytes(8).toString('hex').slice(0, 10)}`;
}

function fillTemplate(lines: readonly string[], v: Record<string, string>): string[] {
  return lines.map((l) => l.replace(/\{(\w+)\}/g, (_, k: string) => v[k] ?? ''));
}

/** The serial's job that is not dead-lettered or cancelled, if any (at most one: see migration 0010). */
function openJob(db: Db, tenantId: string, serial: { gtin: string; serial: string }) {
  return db
    .selectFrom('print_jobs')
    .select(['job_ref', 'state'])
    .where('tenant_id', '=', tenantId)
    .where('gtin', '=', serial.gtin)
    .where('serial', '=', serial.serial)
    .where('state', 'in', [...ACTIVE_STATES, 'SEALED'])
    .executeTakeFirst();
}

function jobExists(serial: string, open: { job_ref: string; state: string }): ApiError {
  return new ApiError(
    'PRINT_JOB_EXISTS',
    `Serial ${serial} already has job ${open.job_ref} (${open.state})`,
    {
      details: { jobRef: open.job_ref, state: open.state },
    },
  );
}

export class JobService {
  constructor(
    private readonly db: Db,
    private readonly port: PrintLoopPort,
    private readonly settings: AidcSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Queues a print job for an allocated serial whose passport is readyToPrint (the spec's gates), and a
   * "work available" notice through the outbox, in one transaction. A job never mints a serial; one serial
   * has at most one job that is not finished (409 PRINT_JOB_EXISTS names it).
   */
  async create(
    tenantId: string,
    input: CreateJobInput,
    actor: Actor,
    correlationId: string,
  ): Promise<JobView> {
    const serial = await this.port.findAllocatedSerial(this.db, tenantId, input.gtin, input.serial);
    if (!serial) {
      throw new ApiError(
        'SERIAL_NOT_ALLOCATED',
        `Serial ${input.serial} is not allocated for GTIN ${input.gtin}`,
        {
          details: { gtin: input.gtin, serial: input.serial },
        },
      );
    }
    if (!(await this.port.isReadyToPrint(this.db, tenantId, serial.productId))) {
      throw new ApiError('PASSPORT_NOT_READY', 'The passport of this product is not ready to print', {
        details: {
          productId: serial.productId,
          hint: 'Anchor a validation and publish the passport (readyToPrint)',
        },
      });
    }
    const t = this.now();
    const iso = new Date(t).toISOString();
    const base = this.settings.defaultTemplate;
    const template: LabelTemplate = {
      ...base,
      ...input.labelTemplate,
      textLines: fillTemplate(input.labelTemplate?.textLines ?? base.textLines, {
        productName: serial.productName,
        gtin: serial.gtin,
        serial: serial.serial,
      }),
    };
    const row: PrintJobTable = {
      job_ref: newJobRef(t),
      tenant_id: tenantId,
      product_id: serial.productId,
      gtin: serial.gtin,
      serial: serial.serial,
      digital_link: serial.digitalLink,
      sgtin96_epc: serial.epc.scheme === 'sgtin-96' ? serial.epc.hex : '',
      epc_scheme: serial.epc.scheme,
      epc_hex: serial.epc.hex,
      label_template: JSON.stringify(template),
      printer: input.printer ?? null,
      requires_rfid: template.rfid ? 1 : 0,
      requires_nfc: template.nfc ? 1 : 0,
      state: 'QUEUED',
      attempt_id: null,
      attempt_count: 0,
      max_attempts: input.maxAttempts ?? this.settings.maxAttempts,
      device_id: null,
      lease_expires_at: null,
      sending_at: null,
      last_error: null,
      created_by: actor.id,
      correlation_id: correlationId,
      created_at: iso,
      updated_at: iso,
      terminal_at: null,
    };
    const insert = this.db.transaction().execute(async (trx) => {
      const open = await openJob(trx, tenantId, serial);
      if (open) throw jobExists(serial.serial, open);
      await trx.insertInto('print_jobs').values(row).execute();
      await this.port.markInPrintLoop(trx, tenantId, serial.productId);
      await enqueueOutbox(trx, {
        topic: WORK_NOTICE_TOPIC,
        tenantId,
        payload: { tenantId, jobRef: row.job_ref, queuedAt: iso },
      });
      await recordAudit(trx, {
        tenantId,
        actor,
        action: 'print_job.created',
        resource: { type: 'print_job', id: row.job_ref },
        correlationId,
        details: { gtin: row.gtin, serial: row.serial },
      });
      return jobView(row);
    });
    try {
      return await insert;
    } catch (err) {
      // Two creates raced past the read above; the partial unique index let one in.
      const open = isUniqueViolation(err) ? await openJob(this.db, tenantId, serial) : undefined;
      if (open) throw jobExists(serial.serial, open);
      throw err;
    }
  }

  async get(
    tenantId: string,
    jobRef: string,
  ): Promise<JobView & { attempts: AttemptView[]; evidence: EvidenceView[]; sealReceipt: string | null }> {
    const row = await this.row(tenantId, jobRef);
    const attempts = await this.db
      .selectFrom('print_attempts')
      .selectAll()
      .where('job_ref', '=', jobRef)
      .orderBy('number')
      .execute();
    const evidence = await this.db
      .selectFrom('print_evidence')
      .selectAll()
      .where('job_ref', '=', jobRef)
      .orderBy('recorded_at')
      .orderBy('id')
      .execute();
    const receipt = await this.db
      .selectFrom('seal_receipts')
      .select('receipt')
      .where('tenant_id', '=', tenantId)
      .where('job_ref', '=', jobRef)
      .executeTakeFirst();
    return {
      ...jobView(row),
      attempts: attempts.map(attemptView),
      evidence: evidence.map(evidenceView),
      sealReceipt: receipt?.receipt ?? null,
    };
  }

  async list(tenantId: string, q: ListJobsQuery): Promise<Page<JobView>> {
    let query = this.db.selectFrom('print_jobs').selectAll().where('tenant_id', '=', tenantId);
    if (q.state) query = query.where('state', '=', q.state);
    if (q.deviceId) query = query.where('device_id', '=', q.deviceId);
    if (q.serial) query = query.where('serial', '=', q.serial);
    if (q.gtin) query = query.where('gtin', '=', q.gtin);
    if (q.cursor) query = query.where('job_ref', '<', q.cursor);
    const rows = await query
      .orderBy('job_ref', 'desc')
      .limit(q.limit + 1)
      .execute();
    // The cursor of this list is the last job reference itself (the refs sort by creation).
    return toPage(rows, q.limit, jobView, (r) => r.job_ref);
  }

  /** Cancels a QUEUED job (before physical work); any other state is 409 INVALID_TRANSITION. */
  async cancel(tenantId: string, jobRef: string, actor: Actor, correlationId: string): Promise<JobView> {
    return this.db.transaction().execute(async (trx) => {
      const iso = new Date(this.now()).toISOString();
      const res = await trx
        .updateTable('print_jobs')
        .set({ state: 'CANCELLED', updated_at: iso, terminal_at: iso })
        .where('tenant_id', '=', tenantId)
        .where('job_ref', '=', jobRef)
        .where('state', '=', 'QUEUED')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) {
        const row = await this.row(tenantId, jobRef, trx);
        throw new ApiError(
          'INVALID_TRANSITION',
          `A ${row.state} job cannot be cancelled; only QUEUED jobs can`,
          {
            details: { from: row.state, to: 'CANCELLED', allowedFrom: ['QUEUED'] },
          },
        );
      }
      await recordAudit(trx, {
        tenantId,
        actor,
        action: 'print_job.cancelled',
        resource: { type: 'print_job', id: jobRef },
        correlationId,
      });
      return jobView(await this.row(tenantId, jobRef, trx));
    });
  }

  async row(tenantId: string, jobRef: string, db: Db = this.db): Promise<PrintJobTable> {
    const row = await db
      .selectFrom('print_jobs')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('job_ref', '=', jobRef)
      .executeTakeFirst();
    if (!row) throw ApiError.notFound('Print job');
    return row;
  }
}
