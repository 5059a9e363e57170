import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalJWKSet, type JWTVerifyGetKey } from 'jose';
import { isAgentError } from '../errors.js';
import { buildDigitalLink, encodeSgtin198 } from '@dpp/shared';
import { GTIN, claimsFor, startEnvelopeSigner, type EnvelopeSigner } from '@dpp/testkit/agent';
import { remoteJwks } from './jwks.js';
import { verifyEnvelope } from './verify.js';

let signer: EnvelopeSigner;
beforeAll(async () => {
  signer = await startEnvelopeSigner();
});
afterAll(() => signer.close());

const opts = (keys: JWTVerifyGetKey = remoteJwks({ url: signer.jwksUrl, cooldownMs: 0 })) => ({
  keys,
  deviceId: 'device-1',
  issuer: 'http://cp.test',
});

function reasonOf(err: unknown): unknown {
  return isAgentError(err, 'ENVELOPE_INVALID') ? err.details?.reason : `not ENVELOPE_INVALID: ${String(err)}`;
}

describe('verifyEnvelope', () => {
  it('accepts an envelope signed by a control-plane key for this device', async () => {
    const claims = claimsFor('1001');
    const { claims: got, kid } = await verifyEnvelope(await signer.sign(claims), opts());
    expect(got).toEqual(claims);
    expect(kid).toBeTruthy();
  });

  it.each([
    ['another device', { aud: 'device-2' }, 'audience'],
    ['another issuer', { iss: 'http://evil.test' }, 'issuer'],
    ['an expired lease', { exp: Math.floor(Date.now() / 1000) - 60 }, 'expired'],
  ])('refuses an envelope for %s', async (_what, over, reason) => {
    const jws = await signer.sign(claimsFor('1002', over));
    await expect(verifyEnvelope(jws, opts()).catch(reasonOf)).resolves.toBe(reason);
  });

  it('refuses a wrong typ, a foreign key and a tampered payload', async () => {
    const claims = claimsFor('1003');
    await expect(
      verifyEnvelope(await signer.sign(claims, { typ: 'JWT' }), opts()).catch(reasonOf),
    ).resolves.toBe('claim_typ');
    await expect(verifyEnvelope(await signer.signWithStranger(claims), opts()).catch(reasonOf)).resolves.toBe(
      'unknown_key',
    );
    const [h, p, s] = (await signer.sign(claims)).split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), serial: '9' }),
    ).toString('base64url');
    await expect(verifyEnvelope(`${h}.${forged}.${s}`, opts()).catch(reasonOf)).resolves.toBe('signature');
  });

  it('refuses claims that contradict themselves (EPC or link of another serial)', async () => {
    const other = claimsFor('77');
    const badEpc = claimsFor('1004', { sgtin96_epc: other.sgtin96_epc });
    const badLink = claimsFor('1004', { digital_link: other.digital_link });
    await expect(verifyEnvelope(await signer.sign(badEpc), opts()).catch(reasonOf)).resolves.toBe('epc');
    await expect(verifyEnvelope(await signer.sign(badLink), opts()).catch(reasonOf)).resolves.toBe(
      'digital_link',
    );
    const noTemplate = { ...claimsFor('1005'), label_template: undefined } as never;
    await expect(verifyEnvelope(await signer.sign(noTemplate), opts()).catch(reasonOf)).resolves.toBe(
      'claims',
    );
  });

  it('accepts an SGTIN-198 EPC of its own serial, and refuses one of another serial or scheme', async () => {
    const serial = 'AB/7%x';
    const epcOf = (s: string) => ({
      scheme: 'sgtin-198' as const,
      hex: encodeSgtin198({ gtin: GTIN, serial: s, companyPrefixLength: 7, filter: 1 }).hex,
    });
    const own = {
      serial,
      digital_link: buildDigitalLink('https://id.example.com', GTIN, serial),
      sgtin96_epc: null,
    };
    const claims = claimsFor('1', { ...own, epc: epcOf(serial) });
    expect((await verifyEnvelope(await signer.sign(claims), opts())).claims).toEqual(claims);
    for (const epc of [
      epcOf('AB/8'),
      { scheme: 'sgtin-96' as const, hex: epcOf(serial).hex },
      { scheme: 'sgtin-198' as const, hex: claimsFor('1').sgtin96_epc! },
    ]) {
      const bad = claimsFor('1', { ...own, epc });
      await expect(verifyEnvelope(await signer.sign(bad), opts()).catch(reasonOf)).resolves.toBe('epc');
    }
    // An SGTIN-96 envelope that names both must name the same EPC in both.
    const both = claimsFor('1007', { epc: { scheme: 'sgtin-96', hex: claimsFor('1008').sgtin96_epc! } });
    await expect(verifyEnvelope(await signer.sign(both), opts()).catch(reasonOf)).resolves.toBe('epc');
  });

  it('fetches the key set again when a new kid appears (rotation), and caches it otherwise', async () => {
    const keys = remoteJwks({ url: signer.jwksUrl, cooldownMs: 0 });
    await verifyEnvelope(await signer.sign(claimsFor('2001')), opts(keys));
    const before = signer.fetches;
    await verifyEnvelope(await signer.sign(claimsFor('2002')), opts(keys));
    expect(signer.fetches).toBe(before);
    await signer.rotate();
    await verifyEnvelope(await signer.sign(claimsFor('2003')), opts(keys));
    expect(signer.fetches).toBe(before + 1);
  });

  it('says NETWORK, not invalid, when the key set cannot be fetched', async () => {
    const keys = remoteJwks({ url: 'http://127.0.0.1:9/.well-known/jwks.json', timeoutMs: 1000 });
    await expect(verifyEnvelope(await signer.sign(claimsFor('3001')), opts(keys))).rejects.toSatisfy((e) =>
      isAgentError(e, 'NETWORK'),
    );
    // A local key set works the same way (what a test may hand in).
    const local = createLocalJWKSet({ keys: [] });
    await expect(
      verifyEnvelope(await signer.sign(claimsFor('3002')), opts(local)).catch(reasonOf),
    ).resolves.toBe('unknown_key');
  });
});
