/**
 * The public company slug: chosen at sign-up or made from the workspace name, unique, validated, editable in
 * settings; a taken slug answers alike whether the email has an account or not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { FormClient, visibleText } from '@dpp/testkit/web';
import { slugFrom, slugProblem } from '../tenants/index.js';

describe('slug rules', () => {
  it('makes a valid slug from any workspace name, and names what is wrong with a typed one', () => {
    expect(slugFrom('Acme Labels GmbH')).toBe('acme-labels-gmbh');
    expect(slugFrom('Société Générale d’Étiquettes')).toBe('societe-generale-d-etiquettes');
    expect(slugFrom('X')).toBe('x-ws');
    expect(slugFrom('Ω')).toBe('workspace-ws');
    expect(slugFrom('API')).toBe('api-ws');
    for (const name of ['A', '@@', 'x'.repeat(90), 'Settings', '--a--'])
      expect(slugProblem(slugFrom(name))).toBeNull();
    expect(slugProblem('acme')).toBeNull();
    for (const bad of ['ac', 'Acme', 'acme-', '-acme', 'ac--me', 'acme labs', 'a'.repeat(41), 'settings'])
      expect(slugProblem(bad), bad).not.toBeNull();
  });
});

describe.each(testDialects())('the public company slug (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 0;
  const email = () => `slug-${dialect}-${++n}@example.com`;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());

  const slugOfEmail = async (address: string) =>
    (
      await t.cp.store.db
        .selectFrom('tenants')
        .innerJoin('users', 'users.tenant_id', 'tenants.id')
        .select('tenants.slug')
        .where('users.email', '=', address)
        .executeTakeFirstOrThrow()
    ).slug;

  it('gives every workspace a unique slug: made from the name, or chosen', async () => {
    const [a, b, c] = [email(), email(), email()];
    await new FormClient(t.url).signUp({ workspaceName: 'Acme Labels', email: a });
    await new FormClient(t.url).signUp({ workspaceName: 'Acme Labels', email: b });
    expect(await slugOfEmail(a)).toBe('acme-labels');
    expect(await slugOfEmail(b)).toBe('acme-labels-2');
    const chosen = await new FormClient(t.url).post('/signup', {
      workspaceName: 'Acme Labels',
      companySlug: 'Acme-EU',
      email: c,
      password: 'p4ssw0rd-typed',
    });
    expect(chosen.status).toBe(303);
    expect(await slugOfEmail(c)).toBe('acme-eu');
    // The seeded workspaces have slugs too.
    const seeded = await t.cp.store.db.selectFrom('tenants').select('slug').execute();
    expect(seeded.every((r) => r.slug && slugProblem(r.slug) === null)).toBe(true);
  });

  it('refuses a taken or malformed slug at sign-up, alike for a new and a taken email', async () => {
    const owner = email();
    await new FormClient(t.url).post('/signup', {
      workspaceName: 'Taken Slug Co',
      companySlug: 'taken-slug',
      email: owner,
      password: 'p4ssw0rd-typed',
    });
    const attempt = (address: string, companySlug: string) =>
      new FormClient(t.url).post('/signup', {
        workspaceName: 'Another',
        companySlug,
        email: address,
        password: 'p4ssw0rd-typed',
      });
    const fresh = await attempt(email(), 'taken-slug');
    const known = await attempt(owner, 'taken-slug');
    expect(fresh.status).toBe(409);
    expect(known.status).toBe(fresh.status);
    expect(visibleText(known.text)).toBe(visibleText(fresh.text));
    expect(visibleText(fresh.text)).toContain('This slug is taken');
    const malformed = await attempt(email(), 'no spaces please');
    expect(malformed.status).toBe(400);
    expect(visibleText(malformed.text)).toContain('lower-case letters');
  });

  it('is changed in settings: a valid free slug is taken at once, another workspace keeps its own', async () => {
    const c = new FormClient(t.url);
    const address = email();
    await c.signUp({ workspaceName: 'Renaming Works', email: address });
    const csrf = await c.csrfToken();
    const taken = await c.post('/settings/workspace/slug', { _csrf: csrf, slug: 'acme-labels' });
    expect(taken.status).toBe(409);
    expect(visibleText(taken.text)).toContain('This slug is taken');
    const bad = await c.post('/settings/workspace/slug', { _csrf: csrf, slug: 'X' });
    expect(bad.status).toBe(400);
    const ok = await c.post('/settings/workspace/slug', { _csrf: csrf, slug: 'renamed-works' });
    expect(ok.status).toBe(303);
    expect(await slugOfEmail(address)).toBe('renamed-works');
    const page = await c.get('/settings');
    expect(visibleText(page.text)).toContain('renamed-works');
    // Without the CSRF token nothing changes.
    expect((await c.post('/settings/workspace/slug', { slug: 'sneaky-slug' })).status).toBe(403);
    expect(await slugOfEmail(address)).toBe('renamed-works');
  });
});
