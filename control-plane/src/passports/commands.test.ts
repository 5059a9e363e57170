import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import {
  command,
  envelope,
  generated,
  keyWith,
  livePassport,
  readyProduct,
  sendCommand,
} from '@dpp/testkit/passports';

/** Valid payload fields of each command (besides passportId). */
const PAYLOAD: Record<string, Record<string, unknown>> = {
  REJECT: { reason: 'Data sheet does not match' },
  EDIT: { updates: { repair: { score: 6 } } },
  PUBLISH: { disclosureTier: 'public' },
  SUSPEND: { reason: 'Under investigation' },
  REVOKE: { reason: 'Issued in error' },
};

/** Commands that bring a fresh (draft) passport to each state. */
const PATH: Record<string, string[]> = {
  draft: [],
  submitted: ['SUBMIT'],
  approved: ['SUBMIT', 'APPROVE'],
  published: ['SUBMIT', 'APPROVE', 'PUBLISH'],
  suspended: ['SUBMIT', 'APPROVE', 'PUBLISH', 'SUSPEND'],
  revoked: ['SUBMIT', 'APPROVE', 'PUBLISH', 'REVOKE'],
  archived: ['ARCHIVE'],
  recycled: ['SUBMIT', 'APPROVE', 'PUBLISH', 'RECYCLE'],
};

describe.each(testDialects())('POST /api/v2/passports/commands (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 400;
  const key = () => t.tenants.a.admin;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());

  /** A generated passport (no version), in `state`. */
  async function passportIn(state: string): Promise<string> {
    const p = await readyProduct(t, key(), ++n);
    await generated(t, key(), p.id);
    for (const c of PATH[state]!) {
      const r = await command(t, p.id, c, PAYLOAD[c]);
      if (r.status !== 200) throw new Error(`${c}: ${r.text}`);
    }
    return p.id;
  }

  it('runs the spec table: draft -SUBMIT-> submitted -APPROVE-> approved -PUBLISH(disclosureTier)-> published', async () => {
    const id = await passportIn('draft');
    const submit = await command(t, id, 'SUBMIT');
    expect(submit.status).toBe(200);
    expect(submit.body).toMatchObject({
      type: 'PASSPORT.SUBMIT',
      passportId: id,
      fromState: 'draft',
      state: 'submitted',
      changed: true,
      warnings: [],
    });
    expect((await command(t, id, 'APPROVE')).body.state).toBe('approved');
    const publish = await command(t, id, 'PUBLISH', { disclosureTier: 'partner' });
    expect(publish.body).toMatchObject({
      fromState: 'approved',
      state: 'published',
      disclosureTier: 'partner',
    });
    const passport = await t.call('GET', `/api/v2/passports/${id}`, { key: key() });
    expect(passport.body).toMatchObject({ state: 'published', disclosureTier: 'partner' });
    const events = await t.cp.store.db
      .selectFrom('events')
      .select('type')
      .where('resource_id', '=', id)
      .execute();
    expect(events.map((e) => e.type)).toContain('approval.completed');
  });

  it('draft SUSPEND is 409 INVALID_TRANSITION; published EDIT is 403 GUARD_REJECTED; nothing changes', async () => {
    const draft = await passportIn('draft');
    const suspend = await command(t, draft, 'SUSPEND', PAYLOAD.SUSPEND);
    expect(suspend.status).toBe(409);
    expect(suspend.body.error).toMatchObject({
      code: 'INVALID_TRANSITION',
      details: { state: 'draft', command: 'PASSPORT.SUSPEND' },
    });
    expect(suspend.body.error.details.allowed).toEqual([
      'PASSPORT.SUBMIT',
      'PASSPORT.EDIT',
      'PASSPORT.ARCHIVE',
    ]);
    const published = await passportIn('published');
    const edit = await command(t, published, 'EDIT', PAYLOAD.EDIT);
    expect(edit.status).toBe(403);
    expect(edit.body.error).toMatchObject({
      code: 'GUARD_REJECTED',
      details: { state: 'published', command: 'PASSPORT.EDIT' },
    });
    expect((await t.call('GET', `/api/v2/passports/${draft}`, { key: key() })).body.state).toBe('draft');
    expect((await t.call('GET', `/api/v2/passports/${published}`, { key: key() })).body.state).toBe(
      'published',
    );
  });

  it('refuses by state before it reads the payload: a refusal the spec documents is never a 400', async () => {
    const draft = await passportIn('draft');
    const published = await passportIn('published');
    const cases: [string, string, Record<string, unknown>, number, string][] = [
      [draft, 'SUSPEND', {}, 409, 'INVALID_TRANSITION'], // reason is required, but SUSPEND cannot run in draft
      [draft, 'SUSPEND', { reason: '' }, 409, 'INVALID_TRANSITION'],
      [draft, 'REINSTATE', { reason: 7, extra: true }, 409, 'INVALID_TRANSITION'],
      [published, 'EDIT', {}, 403, 'GUARD_REJECTED'], // updates is required, but EDIT is guarded here
      [published, 'EDIT', { updates: 'not sections' }, 403, 'GUARD_REJECTED'],
      [draft, 'SUBMIT', { reason: 7 }, 400, 'VALIDATION_ERROR'], // allowed here: now the payload counts
      [draft, 'EDIT', { updates: {}, note: 'x' }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [id, name, payload, status, code] of cases) {
      const r = await command(t, id, name, payload);
      expect(r.status, `${name} ${JSON.stringify(payload)}: ${r.text}`).toBe(status);
      expect(r.body.error.code).toBe(code);
    }
    const missing = await command(t, draft, 'EDIT', {});
    expect(missing.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'payload.updates' },
    });
    expect((await t.call('GET', `/api/v2/passports/${draft}`, { key: key() })).body.state).toBe('draft');
  });

  it('EDIT in draft changes the working content that the next version is minted from', async () => {
    const p = await readyProduct(t, key(), ++n);
    await generated(t, key(), p.id);
    const edit = await command(t, p.id, 'EDIT', {
      updates: { repair: { score: 9, manual: 'https://example.com/m' } },
    });
    expect(edit.body).toMatchObject({ fromState: 'draft', state: 'draft', changed: false });
    const v = await t.call('POST', `/api/v2/dpp/${p.id}/publish`, {
      key: key(),
      body: { amendmentReason: 'Publishing the edited draft' },
    });
    expect(v.body.version.content.repair).toEqual({ score: 9, manual: 'https://example.com/m' });
  });

  it('keeps the SUBMIT-on-published hazard: the public route goes from 200 to 404 (with a warning in the answer)', async () => {
    const p = await livePassport(t, key(), ++n);
    for (const c of ['SUBMIT', 'APPROVE']) expect((await command(t, p.id, c)).status).toBe(200);
    expect((await command(t, p.id, 'PUBLISH', { disclosureTier: 'public' })).status).toBe(200);
    expect((await t.call('GET', `/api/v2/public/passport/${p.id}`)).status).toBe(200);
    const submit = await command(t, p.id, 'SUBMIT');
    expect(submit.body).toMatchObject({ fromState: 'published', state: 'submitted' });
    expect(submit.body.warnings[0]).toMatch(/404/);
    const gone = await t.call('GET', `/api/v2/public/passport/${p.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('PASSPORT_NOT_FOUND');
  });

  it('answers every command in every state as GET /passports/commands says: its transition, 403 for guarded rows, 409 otherwise', async () => {
    const catalog = await t.call('GET', '/api/v2/passports/commands', {
      key: await keyWith(t, ['dpp:read']),
    });
    expect(catalog.status).toBe(200);
    expect(catalog.body.states).toEqual(Object.keys(PATH));
    const byType = new Map<
      string,
      { transitions: { from: string; to: string }[]; guarded: { from: string }[] }
    >(catalog.body.commands.map((c: { type: string }) => [c.type, c]));
    expect([...byType.keys()]).toEqual(
      [
        'SUBMIT',
        'APPROVE',
        'REJECT',
        'EDIT',
        'PUBLISH',
        'SUSPEND',
        'REINSTATE',
        'REVOKE',
        'ARCHIVE',
        'RECYCLE',
      ].map((c) => `PASSPORT.${c}`),
    );
    // The spec's own rows are in the catalog, marked as from the spec.
    expect(byType.get('PASSPORT.SUBMIT')!.transitions).toContainEqual(
      expect.objectContaining({ from: 'published', to: 'submitted', source: 'api-v2.md' }),
    );
    expect(byType.get('PASSPORT.EDIT')!.guarded).toContainEqual(
      expect.objectContaining({ from: 'published', code: 'GUARD_REJECTED', source: 'api-v2.md' }),
    );

    for (const state of Object.keys(PATH)) {
      const shared = await passportIn(state);
      for (const [type, entry] of byType) {
        const name = type.slice('PASSPORT.'.length);
        const row = entry.transitions.find((x) => x.from === state);
        const guarded = entry.guarded.some((g) => g.from === state);
        const target = row ? await passportIn(state) : shared;
        const r = await command(t, target, name, PAYLOAD[name]);
        const what = `${type} in ${state}`;
        if (row) {
          expect(r.status, what).toBe(200);
          expect(r.body.state, what).toBe(row.to);
        } else if (guarded) {
          expect(r.status, what).toBe(403);
          expect(r.body.error.code, what).toBe('GUARD_REJECTED');
        } else {
          expect(r.status, what).toBe(409);
          expect(r.body.error.code, what).toBe('INVALID_TRANSITION');
        }
      }
    }
  }, 120_000);

  it('publicRoute in the catalog is what the public route answers in each state', async () => {
    const catalog = await t.call('GET', '/api/v2/passports/commands', { key: key() });
    for (const { state, status } of catalog.body.publicRoute as { state: string; status: number }[]) {
      const p = await livePassport(t, key(), ++n, { register: false });
      for (const c of PATH[state]!) expect((await command(t, p.id, c, PAYLOAD[c])).status).toBe(200);
      expect((await t.call('GET', `/api/v2/public/passport/${p.id}`)).status, state).toBe(status);
    }
  }, 60_000);

  describe('the envelope', () => {
    let id: string;
    /** Where PUBLISH may run, so its payload is what decides. */
    let approved: string;
    beforeAll(async () => {
      id = await passportIn('draft');
      approved = await passportIn('approved');
    });

    it.each([
      ['type', { type: 'PASSPORT.FLY' }],
      ['type', { type: 'submit' }],
      ['tenantId', { tenantId: 'acme' }],
      ['idempotencyKey', { idempotencyKey: 'k1' }],
      ['actorId', { actorId: undefined }],
      ['correlationId', { correlationId: 42 }],
      ['requestedAt', { requestedAt: 'yesterday' }],
      ['causationId', { causationId: 'x' }],
      ['payload', { payload: 'SUBMIT' }],
    ])('validates %s (400 VALIDATION_ERROR naming it)', async (field, patch) => {
      const body = { ...envelope(t.tenants.a.id, 'PASSPORT.SUBMIT', { passportId: id }), ...patch };
      const r = await sendCommand(t, key(), body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
      expect(r.body.error.details.field).toBe(field);
    });

    it.each([
      [
        'disclosureTier beside payload',
        { disclosureTier: 'public' },
        {},
        'disclosureTier',
        /belongs in the payload/,
      ],
      ['passportId beside payload', { passportId: 'x' }, {}, 'passportId', /payload\.passportId/],
      ['tenantId inside payload', {}, { tenantId: 'x' }, 'payload.tenantId', /top level/],
      ['an unknown top-level field', { priority: 1 }, {}, 'priority', /not a field of the command envelope/],
      [
        'a field of another command',
        {},
        { updates: { a: { b: 1 } } },
        'payload.updates',
        /not a field of PASSPORT.PUBLISH/,
      ],
    ])('names a field at the wrong level: %s', async (_name, top, inPayload, field, message) => {
      const body = {
        ...envelope(t.tenants.a.id, 'PASSPORT.PUBLISH', {
          passportId: approved,
          disclosureTier: 'public',
          ...inPayload,
        }),
        ...top,
      };
      const r = await sendCommand(t, key(), body);
      expect(r.status).toBe(400);
      expect(r.body.error.details.field).toBe(field);
      expect(r.body.error.message).toMatch(message);
    });

    it('PUBLISH requires payload.disclosureTier, one of public, partner, internal', async () => {
      const missing = await sendCommand(
        t,
        key(),
        envelope(t.tenants.a.id, 'PASSPORT.PUBLISH', { passportId: approved }),
      );
      expect(missing.status).toBe(400);
      expect(missing.body.error.details.field).toBe('payload.disclosureTier');
      const bad = await sendCommand(
        t,
        key(),
        envelope(t.tenants.a.id, 'PASSPORT.PUBLISH', { passportId: approved, disclosureTier: 'everyone' }),
      );
      expect(bad.body.error.details.field).toBe('payload.disclosureTier');
    });

    it('a passportId of nothing, of another tenant, or a tenantId not of the credential', async () => {
      expect((await command(t, randomUUID(), 'SUBMIT')).status).toBe(404);
      const other = await readyProduct(t, t.tenants.b.admin, ++n);
      expect((await command(t, other.id, 'SUBMIT')).status).toBe(404);
      const ungenerated = await readyProduct(t, key(), ++n);
      const r = await command(t, ungenerated.id, 'SUBMIT');
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('PASSPORT_NOT_FOUND');
      const wrongTenant = await sendCommand(
        t,
        key(),
        envelope(t.tenants.b.id, 'PASSPORT.SUBMIT', { passportId: id }),
      );
      expect(wrongTenant.status).toBe(400);
      expect(wrongTenant.body.error.details.field).toBe('tenantId');
    });

    it('needs passports:command and an Idempotency-Key header', async () => {
      const body = envelope(t.tenants.a.id, 'PASSPORT.ARCHIVE', { passportId: id });
      const denied = await sendCommand(t, await keyWith(t, ['dpp:edit', 'dpp:read']), body);
      expect(denied.body.error).toMatchObject({
        code: 'API_SCOPE_DENIED',
        details: { required: 'passports:command' },
      });
      const noHeader = await t.call('POST', '/api/v2/passports/commands', { key: key(), body });
      expect(noHeader.body.error.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    });

    it('replays the first result for the envelope idempotencyKey, and answers 409 for another body under it', async () => {
      const target = await passportIn('draft');
      const body = envelope(t.tenants.a.id, 'PASSPORT.SUBMIT', { passportId: target });
      const first = await sendCommand(t, key(), body);
      // Another Idempotency-Key header, the same envelope: the envelope key replays.
      const again = await sendCommand(t, key(), body);
      expect(first.status).toBe(200);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await t.call('GET', `/api/v2/passports/${target}`, { key: key() })).body.state).toBe(
        'submitted',
      );
      const conflict = await sendCommand(t, key(), {
        ...body,
        payload: { passportId: target, reason: 'changed my mind' },
      });
      expect(conflict.status).toBe(409);
      expect(conflict.body.error.code).toBeUndefined();
    });
  });
});

describe.each(testDialects())('what commands do to the public route (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 500;
  const key = () => t.tenants.a.admin;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());

  async function published(): Promise<string> {
    const p = await livePassport(t, key(), ++n);
    for (const c of ['SUBMIT', 'APPROVE']) await command(t, p.id, c);
    await command(t, p.id, 'PUBLISH', { disclosureTier: 'public' });
    return p.id;
  }

  it('suspended and archived are still 200 (never 410), with their state and a notice', async () => {
    const s = await published();
    await command(t, s, 'SUSPEND', { reason: 'Recall check' });
    const suspended = await t.call('GET', `/api/v2/public/passport/${s}`);
    expect(suspended.status).toBe(200);
    expect(suspended.body.state).toBe('suspended');
    expect(suspended.body.notice).toMatch(/suspended/);
    await command(t, s, 'REINSTATE');
    expect((await t.call('GET', `/api/v2/public/passport/${s}`)).body.state).toBe('published');
    await command(t, s, 'ARCHIVE');
    const archived = await t.call('GET', `/api/v2/public/passport/${s}`);
    expect(archived.status).toBe(200);
    expect(archived.body.state).toBe('archived');
  });

  it('REVOKE is 410 PASSPORT_GONE, passport_voided, with Link rel="successor-version" to the recorded successor', async () => {
    const old = await published();
    const successor = await published();
    const r = await command(t, old, 'REVOKE', {
      reason: 'Replaced by a corrected passport',
      successorPassportId: successor,
    });
    expect(r.status).toBe(200);
    const gone = await t.call('GET', `/api/v2/public/passport/${old}`);
    expect(gone.status).toBe(410);
    expect(gone.body.error.code).toBe('PASSPORT_GONE');
    expect(gone.headers.get('x-dpp-gone-reason')).toBe('passport_voided');
    expect(gone.headers.get('link')).toBe(`</api/v2/public/passport/${successor}>; rel="successor-version"`);
    const events = await t.cp.store.db
      .selectFrom('events')
      .select('type')
      .where('resource_id', '=', old)
      .execute();
    expect(events.map((e) => e.type)).toContain('revocation.created');
    // A successor must be another passport of the tenant.
    const self = await published();
    const bad = await command(t, self, 'REVOKE', { reason: 'x', successorPassportId: self });
    expect(bad.body.error.details.field).toBe('payload.successorPassportId');
  });

  it('RECYCLE is 410 PASSPORT_GONE with neither header (the item ceased)', async () => {
    const id = await published();
    await command(t, id, 'RECYCLE');
    const gone = await t.call('GET', `/api/v2/public/passport/${id}`);
    expect(gone.status).toBe(410);
    expect(gone.headers.get('x-dpp-gone-reason')).toBeNull();
    expect(gone.headers.get('link')).toBeNull();
  });

  it('PUBLISH to partners or internally takes the passport off the public route (404)', async () => {
    const p = await livePassport(t, key(), ++n);
    for (const c of ['SUBMIT', 'APPROVE']) await command(t, p.id, c);
    await command(t, p.id, 'PUBLISH', { disclosureTier: 'internal' });
    expect((await t.call('GET', `/api/v2/public/passport/${p.id}`)).status).toBe(404);
  });
});
