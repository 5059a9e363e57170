/**
 * The compose deployment as shipped, checked without Docker: every file it mounts is in the repository, every
 * variable it reads is in .env.example and documented on the operations page, no secret is committed, the
 * image copies every workspace's manifest (or `npm ci` fails in the build), and the reverse proxy passes the
 * client address the per-IP budgets need to replicas that believe only it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const read = (f: string) => readFileSync(path.join(repo, f), 'utf8');

interface Service {
  image?: string;
  build?: string;
  volumes?: string[];
  environment?: Record<string, string>;
  command?: string[];
}
const compose = parse(read('docker-compose.yml')) as { services: Record<string, Service>; volumes: object };
const composeText = read('docker-compose.yml');

describe('docker-compose.yml and .env.example', () => {
  it('mounts only files that exist in the repository (named volumes aside)', () => {
    const named = new Set(Object.keys(compose.volumes));
    const mounts = Object.values(compose.services).flatMap((s) => s.volumes ?? []);
    expect(mounts.length).toBeGreaterThan(0);
    for (const m of mounts) {
      const source = m.split(':')[0]!;
      if (named.has(source)) continue;
      expect(existsSync(path.join(repo, source)), `${m}: ${source} is not in the repository`).toBe(true);
    }
  });

  it('reads only variables that .env.example lists and the operations page documents; commits no secret', () => {
    const used = [...new Set([...composeText.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]!))].sort();
    expect(used.length).toBeGreaterThan(0);
    const example = Object.fromEntries(
      read('.env.example')
        .split('\n')
        .filter((l) => /^[A-Z0-9_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    const operations = read('docs/operations.md');
    for (const v of used) {
      expect(Object.keys(example), `${v} is not in .env.example`).toContain(v);
      expect(operations, `${v} is not documented in docs/operations.md`).toContain(`\`${v}\``);
    }
    for (const [k, v] of Object.entries(example))
      if (/PASSWORD|KEY|SECRET/.test(k)) expect(v, `${k} has a value in .env.example`).toBe('');
    // No literal password in the compose file itself: each comes from the environment.
    for (const s of Object.values(compose.services))
      for (const [k, v] of Object.entries(s.environment ?? {}))
        if (/PASSWORD|SECRET/.test(k)) expect(String(v), k).toMatch(/^\$\{/);
  });

  it('builds an image that copies every workspace manifest before npm ci', () => {
    const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces;
    const dockerfile = read('Dockerfile');
    for (const w of workspaces) expect(dockerfile, w).toContain(`COPY ${w}/package.json ${w}/`);
  });

  it('gives devices logins of their own on the broker, and runs a demo floor from the repository through the proxy', () => {
    const cp = compose.services['control-plane']!.environment!;
    expect(cp.MQTT_DEVICE_AUTH).toBe('dynamic-security');
    const demo = compose.services['demo-floor']!;
    const entry = demo.command!.find((a) => a.endsWith('.ts'))!;
    expect(existsSync(path.join(repo, entry)), entry).toBe(true);
    const source = read(entry);
    for (const v of ['DATABASE_URL', 'CONTROL_PLANE_URL']) {
      expect(source, `${entry} does not read ${v}`).toContain(`'${v}'`);
      expect(demo.environment![v], `demo-floor does not set ${v}`).toBeTruthy();
    }
    expect(demo.environment!.CONTROL_PLANE_URL).toBe('http://lb:8080');
    expect(read('Dockerfile')).toMatch(/apt-get install[^\n]*socat/);
  });

  it('ships an EMQX configuration that checks device tokens as the control plane issues them', () => {
    const emqx = read('deploy/emqx/emqx.conf');
    expect(emqx).toContain('endpoint = "http://lb:8080/.well-known/jwks.json"');
    // The claims a device access token carries (oauth/tokens.ts): sub = device id, principal_type = device.
    expect(emqx).toMatch(/verify_claims \{ sub = "\$\{username\}", principal_type = "device" \}/);
    expect(emqx).toContain('no_match = deny');
    const acl = read('deploy/emqx/acl.conf');
    expect(acl).toContain('{allow, {username, "control-plane"}, all, ["dpp/#"]}.');
    expect(acl.trim().endsWith('{deny, all}.')).toBe(true);
  });

  it('forwards the client address through the proxy, and the replicas believe only their private network', () => {
    const nginx = read('deploy/nginx.conf');
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    expect(compose.services['control-plane']!.environment!.TRUST_PROXY).toBe('uniquelocal');
    expect(compose.services.lb!.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
  });
});
