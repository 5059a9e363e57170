import { generateKeyPairSync, sign } from 'node:crypto';
import { CompactSign, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { publicKeyOfJwk, verifyEdDsaCompact } from './compact-jws.js';

const pair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicJwk: JSON.stringify(publicKey.export({ format: 'jwk' })) };
};
const device = pair();
const other = pair();

/** Signs with jose (what the agent and the test devices use), with any protected header. */
async function signed(header: Record<string, unknown>, payload = '{"job":"j-1"}', key = device.privateKey) {
  return new CompactSign(new TextEncoder().encode(payload))
    .setProtectedHeader(header as { alg: string })
    .sign(await importJWK(key.export({ format: 'jwk' }), 'EdDSA'));
}

const b64 = (s: string) => Buffer.from(s).toString('base64url');

describe('verifyEdDsaCompact', () => {
  it('verifies what jose signs and gives back the header and the payload', async () => {
    const jws = await signed({ alg: 'EdDSA', kid: 'k1', typ: 'x+jws' });
    const v = verifyEdDsaCompact(jws, publicKeyOfJwk(device.publicJwk));
    expect(v.header).toEqual({ alg: 'EdDSA', kid: 'k1', typ: 'x+jws' });
    expect(v.payload.toString('utf8')).toBe('{"job":"j-1"}');
  });

  it('refuses another key, a changed payload and a changed header', async () => {
    const jws = await signed({ alg: 'EdDSA', typ: 'x+jws' });
    const [h, , s] = jws.split('.');
    expect(() => verifyEdDsaCompact(jws, publicKeyOfJwk(other.publicJwk))).toThrow(
      'signature verification failed',
    );
    expect(() =>
      verifyEdDsaCompact(`${h}.${b64('{"job":"j-2"}')}.${s}`, publicKeyOfJwk(device.publicJwk)),
    ).toThrow('signature verification failed');
    const header = b64(JSON.stringify({ alg: 'EdDSA', typ: 'y+jws' }));
    expect(() =>
      verifyEdDsaCompact(`${header}.${jws.split('.')[1]}.${s}`, publicKeyOfJwk(device.publicJwk)),
    ).toThrow('signature verification failed');
  });

  it('refuses other algorithms, critical extensions and unencoded payloads, even when signed', async () => {
    const key = publicKeyOfJwk(device.publicJwk);
    // A header that says another algorithm is refused before any signature is looked at.
    const none = `${b64('{"alg":"none"}')}.${b64('{}')}.${b64('x')}`;
    expect(() => verifyEdDsaCompact(none, key)).toThrow('alg must be EdDSA');
    const withHeader = (header: object) => {
      const input = `${b64(JSON.stringify(header))}.${b64('{}')}`;
      return `${input}.${sign(null, Buffer.from(input), device.privateKey).toString('base64url')}`;
    };
    expect(() => verifyEdDsaCompact(withHeader({ alg: 'EdDSA' }), key)).not.toThrow();
    expect(() => verifyEdDsaCompact(withHeader({ alg: 'EdDSA', crit: ['x'], x: 1 }), key)).toThrow('crit');
    expect(() => verifyEdDsaCompact(withHeader({ alg: 'EdDSA', b64: false }), key)).toThrow('b64');
  });

  it('refuses what is not a compact JWS', async () => {
    const key = publicKeyOfJwk(device.publicJwk);
    const jws = await signed({ alg: 'EdDSA' });
    for (const bad of [
      '',
      'a.b',
      `${jws}.x`,
      jws.replace(/^./, '+'),
      `${b64('[1]')}.${b64('{}')}.${b64('x')}`,
      `${b64('not json')}.${b64('{}')}.${b64('x')}`,
      `${jws.split('.').slice(0, 2).join('.')}.`,
    ])
      expect(() => verifyEdDsaCompact(bad, key), bad).toThrow();
  });

  it('imports only Ed25519 public JWKs, and keeps each imported key', () => {
    expect(publicKeyOfJwk(device.publicJwk)).toBe(publicKeyOfJwk(device.publicJwk));
    const withPrivate = JSON.stringify(device.privateKey.export({ format: 'jwk' }));
    expect(() => publicKeyOfJwk(withPrivate)).toThrow('not an Ed25519 public JWK');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    expect(() => publicKeyOfJwk(JSON.stringify(ec))).toThrow('not an Ed25519 public JWK');
  });
});
