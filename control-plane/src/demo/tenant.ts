import fs from 'node:fs/promises';
import path from 'node:path';
import { ALL_SCOPES } from '@dpp/shared';
import type { Store } from '../store/index.js';
import { applySeed, hashPassword } from '../tenants/index.js';

const DEMO_TENANT_ID = '00000000-0000-4000-8000-00000000de00';
const DEMO_EMAIL = 'demo@example.com';

export interface DemoCredentials {
  apiKey: string;
  /** A second, read-only key of the workspace: the one the walkthrough rotates and revokes. */
  spareKey?: string;
  email: string;
  password: string;
}

/**
 * Creates (once) a demo workspace with an owner, an all-scopes key and a spare read-only key; remembers
 * them in DATA_DIR. Every start makes both keys active again, so the walkthrough can revoke the spare one
 * and be run again after the next start.
 */
export async function ensureDemoTenant(store: Store, dataDir: string): Promise<DemoCredentials> {
  const file = path.join(dataDir, 'demo-credentials.json');
  const saved = await fs
    .readFile(file, 'utf8')
    .then((s) => JSON.parse(s) as DemoCredentials)
    .catch(() => undefined);
  const creds: DemoCredentials = saved ?? {
    apiKey: `dpp_sk_demo_${crypto.randomUUID().replace(/-/g, '')}`,
    email: DEMO_EMAIL,
    password: `demo-${crypto.randomUUID().slice(0, 8)}`,
  };
  const spareKey = creds.spareKey ?? `dpp_sk_demo_${crypto.randomUUID().replace(/-/g, '')}`;
  await applySeed(store.db, {
    tenants: [
      {
        id: DEMO_TENANT_ID,
        name: 'Demo Workspace',
        tier: 'enterprise',
        sandbox: false,
        apiKeys: [
          { secret: creds.apiKey, scopes: [ALL_SCOPES], name: 'demo' },
          { secret: spareKey, scopes: ['products:read'], name: 'spare' },
        ],
      },
    ],
  });
  const owner = await store.db
    .selectFrom('users')
    .select('id')
    .where('email', '=', creds.email)
    .executeTakeFirst();
  if (!owner) {
    await store.db
      .insertInto('users')
      .values({
        id: crypto.randomUUID(),
        tenant_id: DEMO_TENANT_ID,
        email: creds.email,
        password_hash: await hashPassword(creds.password),
        role: 'owner',
        created_at: new Date().toISOString(),
      })
      .execute();
  }
  if (!saved?.spareKey) {
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(file, JSON.stringify({ ...creds, spareKey }, null, 2) + '\n', { mode: 0o600 });
  }
  return { ...creds, spareKey };
}
