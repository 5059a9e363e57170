import { describe, expect, it } from 'vitest';
import { ApiError } from '../http/index.js';
import { type HostResolver, WebhookUrlPolicy, isNonPublicAddress } from './url-policy.js';

const dnsTable: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.216.34', '192.168.1.10'],
  'v6-loopback.example.com': ['::1'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
};
const fakeResolver: HostResolver = async (host) => {
  const addresses = dnsTable[host];
  if (!addresses) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const production = new WebhookUrlPolicy({ allowPrivateNetworks: false, resolve: fakeResolver });
const development = new WebhookUrlPolicy({ allowPrivateNetworks: true, resolve: fakeResolver });

async function refusal(
  policy: WebhookUrlPolicy,
  url: string,
): Promise<{ message: string; field: unknown } | undefined> {
  try {
    await policy.check(url);
    return undefined;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    expect(err.status).toBe(400);
    expect(err.code).toBe('VALIDATION_ERROR');
    return { message: err.message, field: err.details?.field };
  }
}

describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '64:ff9b::7f00:1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:8.8.8.8'])(
    'accepts the public address %s',
    (address) => {
      expect(isNonPublicAddress(address)).toBe(false);
    },
  );
});

describe('WebhookUrlPolicy in production (SSRF protection)', () => {
  it('accepts a public https or http URL and returns it normalised', async () => {
    expect(await production.check('https://HOOKS.example.com/in?x=1')).toBe(
      'https://hooks.example.com/in?x=1',
    );
    expect(await production.check('http://93.184.216.34:8080/hook')).toBe('http://93.184.216.34:8080/hook');
  });

  it.each([
    ['http://127.0.0.1:9000/hook', '127.0.0.1'],
    ['http://[::1]/hook', '::1'],
    ['http://2130706433/hook', '127.0.0.1'],
    ['http://0x7f.1/hook', '127.0.0.1'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254'],
    ['https://10.0.0.8/hook', '10.0.0.8'],
    ['https://[fd00::1]/hook', 'fd00::1'],
    ['http://localhost:3000/hook', 'localhost'],
    ['http://api.localhost/hook', 'api.localhost'],
    ['https://internal.example.com/hook', '10.1.2.3'],
    ['https://mixed.example.com/hook', '192.168.1.10'],
    ['https://v6-loopback.example.com/hook', '::1'],
    ['https://mapped.example.com/hook', '::ffff:127.0.0.1'],
  ])('refuses %s, naming url and the address', async (url, shown) => {
    const r = await refusal(production, url);
    expect(r?.field).toBe('url');
    expect(r?.message).toContain(shown);
  });

  it('refuses a host that does not resolve', async () => {
    expect((await refusal(production, 'https://nowhere.example.com/'))?.message).toContain(
      'does not resolve',
    );
  });

  it('checks the address actually connected to at delivery time (DNS rebinding)', async () => {
    const table: Record<string, string> = { 'rebind.example.com': '93.184.216.34' };
    const policy = new WebhookUrlPolicy({
      allowPrivateNetworks: false,
      resolve: async (host) => [{ address: table[host] ?? '0.0.0.0', family: 4 }],
    });
    expect(await policy.check('https://rebind.example.com/')).toBe('https://rebind.example.com/');
    table['rebind.example.com'] = '127.0.0.1';
    const lookup = policy.lookup()!;
    const err = await new Promise<Error | null>((resolve) =>
      lookup('rebind.example.com', {}, (e) => resolve(e)),
    );
    expect(err?.message).toContain('127.0.0.1');
    table['rebind.example.com'] = '93.184.216.34';
    const ok = await new Promise<string>((resolve, reject) =>
      lookup('rebind.example.com', {}, (e, address) => (e ? reject(e) : resolve(address as string))),
    );
    expect(ok).toBe('93.184.216.34');
    // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily).
    const all = await new Promise<unknown>((resolve, reject) =>
      lookup('rebind.example.com', { all: true }, (e, addresses) => (e ? reject(e) : resolve(addresses))),
    );
    expect(all).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(policy.refuseLiteral(new URL('http://127.0.0.1/'))).toContain('127.0.0.1');
    expect(policy.refuseLiteral(new URL('http://93.184.216.34/'))).toBeUndefined();
  });
});

describe('WebhookUrlPolicy in every environment', () => {
  it.each([
    ['not a url', 'absolute'],
    ['/relative/path', 'absolute'],
    ['ftp://hooks.example.com/', 'https or http'],
    ['file:///etc/passwd', 'https or http'],
    ['https://user:pass@hooks.example.com/', 'credentials'],
    ['https://hooks.example.com/#frag', 'fragment'],
    [`https://hooks.example.com/${'a'.repeat(2100)}`, '2048'],
  ])('refuses %s', async (url, words) => {
    for (const policy of [production, development]) {
      expect((await refusal(policy, url))?.message).toContain(words);
    }
  });

  it('allows loopback and private receivers in development and test, without resolving them', async () => {
    expect(await development.check('http://127.0.0.1:9000/hook')).toBe('http://127.0.0.1:9000/hook');
    expect(await development.check('http://localhost:3000/hook')).toBe('http://localhost:3000/hook');
    expect(await development.check('http://unresolvable.invalid/hook')).toBe(
      'http://unresolvable.invalid/hook',
    );
    expect(development.lookup()).toBeUndefined();
    expect(development.refuseLiteral(new URL('http://127.0.0.1/'))).toBeUndefined();
  });
});
