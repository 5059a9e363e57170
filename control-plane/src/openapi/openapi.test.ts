import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';

describe('OpenAPI document and JSON Schema catalogue', () => {
  let t: TestControlPlane;
  let doc: { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>> };
  beforeAll(async () => {
    t = await startTestControlPlane();
    const r = await t.call('GET', '/api/v2/openapi.json');
    expect(r.status).toBe(200);
    doc = r.body;
  });
  afterAll(() => t.close());

  it('is public and OpenAPI 3.1', () => {
    expect(doc.openapi).toBe('3.1.0');
  });

  it('passes the Redocly recommended ruleset with no errors', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(doc),
      absoluteRef: 'openapi.json',
      config,
    });
    const errors = problems.filter((p) => p.severity === 'error');
    expect(errors.map((e) => `${e.ruleId}: ${e.message} at ${e.location[0]?.pointer}`)).toEqual([]);
  });

  it('lists every mounted operation with its scope and idempotency policy', () => {
    for (const def of t.cp.built.routes) {
      const op = doc.paths[def.path]?.[def.method];
      expect(op, `${def.method} ${def.path}`).toBeDefined();
      expect(op!.operationId).toBe(def.operationId);
      expect(op!['x-required-scopes']).toEqual(def.auth === 'none' ? [] : def.auth.scopes);
      expect(op!['x-idempotency']).toBe(def.idempotency ?? 'none');
    }
  });

  it('documents the error responses of an operation, with the envelope', () => {
    const revoke = doc.paths['/api/v2/api-keys/{id}/revoke']!.post!;
    const responses = revoke.responses as Record<string, { description: string }>;
    expect(responses['401']).toBeDefined();
    expect(responses['403']!.description).toContain('API_SCOPE_DENIED');
    expect(responses['409']!.description).toContain('ALREADY_REVOKED');
    expect(responses['429']!.description).toContain('RATE_LIMITED');
  });

  it('serves the JSON Schema catalogue publicly, each schema resolvable', async () => {
    const index = await t.call('GET', '/api/v2/json-schemas');
    expect(index.status).toBe(200);
    const ids = index.body.data.map((e: { id: string }) => e.id);
    expect(ids).toContain('ApiKey');
    expect(ids).toContain('ErrorEnvelope');
    const one = await t.call('GET', '/api/v2/json-schemas/ApiKey.json');
    expect(one.status).toBe(200);
    expect(one.headers.get('content-type')).toContain('application/schema+json');
    expect(one.body.properties.id).toBeDefined();
    expect((await t.call('GET', '/api/v2/json-schemas/Nope.json')).status).toBe(404);
  });
});
