import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import { ApiError } from '../http/index.js';

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (the system resolver, or a fake one in tests). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) => {
  const all = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface UrlPolicyOptions {
  /**
   * Allow loopback, private, link-local and unique-local receivers. True in development and test, so
   * a receiver on 127.0.0.1 works; false in production (SSRF protection).
   */
  allowPrivateNetworks: boolean;
  resolve?: HostResolver;
}

export const MAX_URL_LENGTH = 2048;

/**
 * Addresses a production webhook may never reach: everything that is not globally routable unicast.
 * IPv4: RFC 1122 "this network", RFC 1918 private, RFC 6598 shared (CGNAT), loopback, RFC 3927
 * link-local, IETF protocol assignments, the three TEST-NETs, RFC 2544 benchmarking, multicast and
 * reserved (including broadcast). IPv6: unspecified, loopback, discard-only, documentation, RFC 4193
 * unique-local, link-local, site-local and multicast. IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is matched
 * against the IPv4 rules by BlockList itself; NAT64 and 6to4 embed an IPv4 address and are refused
 * outright rather than decoded.
 */
function buildBlockList(): net.BlockList {
  const list = new net.BlockList();
  const v4: [string, number][] = [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ];
  const v6: [string, number][] = [
    ['::', 128],
    ['::1', 128],
    ['64:ff9b::', 96],
    ['64:ff9b:1::', 48],
    ['100::', 64],
    ['2001:db8::', 32],
    ['2002::', 16],
    ['fc00::', 7],
    ['fe80::', 10],
    ['fec0::', 10],
    ['ff00::', 8],
  ];
  for (const [net4, prefix] of v4) list.addSubnet(net4, prefix, 'ipv4');
  for (const [net6, prefix] of v6) list.addSubnet(net6, prefix, 'ipv6');
  return list;
}

const BLOCKED = buildBlockList();

/** True when an IP address is loopback, private, link-local, unique-local or otherwise not public. */
export function isNonPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  return BLOCKED.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** The host of a URL as an address or name: IPv6 literals lose their brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Refused on delivery: the receiver's address is not public. Retried like any connection error. */
export class AddressRefusedError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`refused: ${host} resolves to non-public address ${address}`);
    this.name = 'AddressRefusedError';
  }
}

/**
 * Where webhooks may be sent. `check` validates a URL when an endpoint is created or changed (400
 * VALIDATION_ERROR naming `url`); `lookup` is handed to the HTTP client so that, in production, the
 * address actually connected to is checked at delivery time too. A host that resolved to a public
 * address when the endpoint was saved and to 127.0.0.1 later (DNS rebinding) is refused then.
 */
export class WebhookUrlPolicy {
  readonly allowPrivateNetworks: boolean;
  private readonly resolve: HostResolver;

  constructor(options: UrlPolicyOptions) {
    this.allowPrivateNetworks = options.allowPrivateNetworks;
    this.resolve = options.resolve ?? systemResolver;
  }

  /** Validates an endpoint URL; returns it normalised (WHATWG serialisation). */
  async check(raw: string): Promise<string> {
    const bad = (message: string) => ApiError.validation('url', `url: ${message}`);
    if (raw.length > MAX_URL_LENGTH) throw bad(`must be at most ${MAX_URL_LENGTH} characters`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw bad('must be an absolute http or https URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw bad('must use https or http');
    if (url.username || url.password) throw bad('must not carry credentials; deliveries are signed');
    if (url.hash) throw bad('must not have a fragment');
    if (this.allowPrivateNetworks) return url.href;

    const host = hostOf(url);
    if (net.isIP(host) !== 0) {
      if (isNonPublicAddress(host)) throw bad(`${host} is not a public address`);
      return url.href;
    }
    if (host === 'localhost' || host.endsWith('.localhost')) throw bad(`${host} is a loopback name`);
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolve(host);
    } catch {
      throw bad(`host ${host} does not resolve`);
    }
    if (addresses.length === 0) throw bad(`host ${host} does not resolve`);
    const refused = addresses.find((a) => isNonPublicAddress(a.address));
    if (refused) throw bad(`${host} resolves to ${refused.address}, which is not a public address`);
    return url.href;
  }

  /**
   * Refuses, before any connection, a URL whose host is a non-public IP literal (the HTTP client does
   * not call `lookup` for literals). Returns the reason, or undefined when the URL may be tried.
   */
  refuseLiteral(url: URL): string | undefined {
    if (this.allowPrivateNetworks) return undefined;
    const host = hostOf(url);
    if (net.isIP(host) !== 0 && isNonPublicAddress(host)) return new AddressRefusedError(host, host).message;
    if (host === 'localhost' || host.endsWith('.localhost')) return `refused: ${host} is a loopback name`;
    return undefined;
  }

  /**
   * A `lookup` for `http.request` that resolves through this policy and fails the connection when any
   * address is not public. Undefined when private networks are allowed (the default lookup is used).
   */
  lookup(): LookupFunction | undefined {
    if (this.allowPrivateNetworks) return undefined;
    return (hostname, options, callback) => {
      this.resolve(hostname).then(
        (addresses) => {
          const refused = addresses.find((a) => isNonPublicAddress(a.address));
          if (refused) {
            callback(new AddressRefusedError(hostname, refused.address), '', 4);
            return;
          }
          const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
          const usable = wanted ? addresses.filter((a) => a.family === wanted) : addresses;
          const first = usable[0];
          if (!first) {
            const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
            callback(err, '', 4);
            return;
          }
          if (options.all) {
            (callback as unknown as (e: null, all: dns.LookupAddress[]) => void)(null, usable);
          } else {
            callback(null, first.address, first.family);
          }
        },
        (err: NodeJS.ErrnoException) => callback(err, '', 4),
      );
    };
  }
}
