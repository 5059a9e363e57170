import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { recordAudit } from '../audit/index.js';
import type { Tier } from '../config/index.js';
import type { TenantInfo } from '../http/index.js';
import { type Db, isUniqueViolation } from '../store/index.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { SlugTakenError, slugProblem, slugTaken } from './slug.js';
import { findTenant, insertTenant } from './tenants.js';

export const SESSION_TTL_MS = 12 * 3_600_000;

export interface SignupInput {
  workspaceName: string;
  /** The public company slug; made from the workspace name when absent. */
  companySlug?: string | undefined;
  email: string;
  password: string;
  tier?: Tier;
  sandbox?: boolean;
  sandboxDays?: number;
}

export interface SignupProblem {
  field: 'workspaceName' | 'companySlug' | 'email' | 'password';
  message: string;
}

export interface Session {
  id: string;
  userId: string;
  email: string;
  tenant: TenantInfo;
  csrfToken: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function checkSignup(input: SignupInput): SignupProblem[] {
  const problems: SignupProblem[] = [];
  input = { ...input, email: input.email.trim() };
  if (input.workspaceName.trim().length < 2 || input.workspaceName.length > 100) {
    problems.push({ field: 'workspaceName', message: 'Workspace name must be 2 to 100 characters' });
  }
  const slugIssue = input.companySlug ? slugProblem(input.companySlug) : null;
  if (slugIssue) problems.push({ field: 'companySlug', message: slugIssue });
  if (!EMAIL.test(input.email) || input.email.length > 254) {
    problems.push({ field: 'email', message: 'Enter a valid email address' });
  }
  if (input.password.length < 10 || input.password.length > 200) {
    problems.push({ field: 'password', message: 'Password must be at least 10 characters' });
  }
  return problems;
}

/**
 * Browser sign-up: a new tenant and its owner in one transaction. The only way tenants come to be
 * (api-v2.md: no API or CLI creates tenants).
 */
export async function signUp(db: Db, input: SignupInput): Promise<{ tenant: TenantInfo; userId: string }> {
  const email = input.email.trim().toLowerCase();
  const passwordHash = await hashPassword(input.password);
  for (let tries = 1; ; tries++) {
    try {
      return await insertAccount(db, input, email, passwordHash);
    } catch (err) {
      // A taken slug answers the same whatever the email (insertAccount checks it first).
      if (err instanceof SlugTakenError) throw err;
      // Two sign-ups racing with one email: the unique index decides, and the loser hears it plainly.
      const taken = await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
      if (taken) throw new EmailTakenError();
      if (!isUniqueViolation(err)) throw err;
      // A chosen slug another sign-up took meanwhile is refused; one made from the name is made again.
      if (input.companySlug && (await slugTaken(db, input.companySlug)))
        throw new SlugTakenError(input.companySlug);
      if (tries >= 3) throw err;
    }
  }
}

async function insertAccount(
  db: Db,
  input: SignupInput,
  email: string,
  passwordHash: string,
): Promise<{ tenant: TenantInfo; userId: string }> {
  return db.transaction().execute(async (trx) => {
    // The slug before the email: a taken slug answers the same whether the email has an account or not.
    if (input.companySlug && (await slugTaken(trx, input.companySlug)))
      throw new SlugTakenError(input.companySlug);
    const taken = await trx.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
    if (taken) throw new EmailTakenError();
    const sandbox = input.sandbox ?? false;
    const tenant = await insertTenant(trx, {
      name: input.workspaceName.trim(),
      ...(input.companySlug ? { slug: input.companySlug } : {}),
      tier: input.tier ?? 'free',
      sandbox,
      sandboxExpiresAt: sandbox
        ? new Date(Date.now() + (input.sandboxDays ?? 30) * 86_400_000).toISOString()
        : null,
    });
    const userId = randomUUID();
    await trx
      .insertInto('users')
      .values({
        id: userId,
        tenant_id: tenant.id,
        email,
        password_hash: passwordHash,
        role: 'owner',
        created_at: new Date().toISOString(),
      })
      .execute();
    await recordAudit(trx, {
      tenantId: tenant.id,
      actor: { type: 'user', id: userId },
      action: 'tenant.signed_up',
      resource: { type: 'tenant', id: tenant.id },
    });
    return { tenant, userId };
  });
}

export class EmailTakenError extends Error {
  override name = 'EmailTakenError';
  constructor() {
    super('An account with this email already exists');
  }
}

function sessionId(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Checks a password and opens a session; returns the cookie token (only its hash is stored). */
export async function signIn(db: Db, email: string, password: string): Promise<string | null> {
  const user = await db
    .selectFrom('users')
    .selectAll()
    .where('email', '=', email.trim().toLowerCase())
    .executeTakeFirst();
  // Verify against a dummy hash when the user is unknown so timing does not reveal accounts.
  const ok = await verifyPassword(password, user?.password_hash ?? DUMMY_HASH);
  if (!user || !ok) return null;
  return openSession(db, user.id, user.tenant_id);
}

export async function openSession(db: Db, userId: string, tenantId: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const now = Date.now();
  await db
    .insertInto('sessions')
    .values({
      id: sessionId(token),
      user_id: userId,
      tenant_id: tenantId,
      csrf_token: randomBytes(24).toString('base64url'),
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + SESSION_TTL_MS).toISOString(),
    })
    .execute();
  return token;
}

export async function findSession(db: Db, token: string | undefined): Promise<Session | null> {
  if (!token) return null;
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select([
      'sessions.id',
      'sessions.user_id',
      'sessions.tenant_id',
      'sessions.csrf_token',
      'sessions.expires_at',
      'users.email',
    ])
    .where('sessions.id', '=', sessionId(token))
    .executeTakeFirst();
  if (!row || row.expires_at <= new Date().toISOString()) return null;
  const tenant = await findTenant(db, row.tenant_id);
  if (!tenant) return null;
  return { id: row.id, userId: row.user_id, email: row.email, tenant, csrfToken: row.csrf_token };
}

export async function closeSession(db: Db, token: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId(token)).execute();
}

const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$' + Buffer.alloc(64).toString('base64');

/** Deletes sessions past their expiry (housekeeping). */
export async function purgeExpiredSessions(db: Db): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', new Date().toISOString()).execute();
}
