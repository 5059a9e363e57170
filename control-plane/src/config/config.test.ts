import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('has the defaults of DESIGN.md', () => {
    const c = loadConfig({}, '/srv');
    expect(c).toMatchObject({
      env: 'development',
      port: 8080,
      dataDir: '/srv/data',
      databaseUrl: undefined,
      databasePoolSize: 10,
      mqttPort: 1883,
      mqttUrl: undefined,
      publicBaseUrl: 'http://localhost:8080',
      retentionDays: 30,
      heapGrowthPercent: 50,
    });
    expect(loadConfig({ RETENTION_DAYS: '90' }).retentionDays).toBe(90);
    expect(loadConfig({ DATABASE_POOL_SIZE: '4' }).databasePoolSize).toBe(4);
    expect(loadConfig({}).transparencyLog.sequenceGapMs).toBe(250);
    expect(loadConfig({ LOG_SEQUENCE_GAP_MS: '0' }).transparencyLog.sequenceGapMs).toBe(0);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadConfig({}).secretsKey).toBeUndefined();
    expect(loadConfig({ SECRETS_KEY: 'ab'.repeat(32) }).secretsKey).toEqual(Buffer.alloc(32, 0xab));
    expect(loadConfig({ SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') }).secretsKey).toEqual(
      Buffer.alloc(32, 7),
    );
  });

  it('derives PUBLIC_BASE_URL from PORT and strips a trailing slash when given', () => {
    expect(loadConfig({ PORT: '9000' }).publicBaseUrl).toBe('http://localhost:9000');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://id.example.com/' }).publicBaseUrl).toBe(
      'https://id.example.com',
    );
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ MQTT_PORT: '-1' }, 'MQTT_PORT'],
    [{ MQTT_DEVICE_AUTH: 'jwt' }, 'MQTT_DEVICE_AUTH'],
    [{ MQTT_DEVICE_AUTH: 'dynamic-security', MQTT_DEVICE_SECRET: 'x'.repeat(32) }, 'MQTT_DEVICE_AUTH'],
    [{ MQTT_URL: 'mqtt://b:1883', MQTT_DEVICE_AUTH: 'dynamic-security' }, 'MQTT_DEVICE_SECRET'],
    [
      { MQTT_URL: 'mqtt://b:1883', MQTT_DEVICE_AUTH: 'dynamic-security', MQTT_DEVICE_SECRET: 'short' },
      'MQTT_DEVICE_SECRET',
    ],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ DPP_ENV: 'staging' }, 'DPP_ENV'],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, 'PUBLIC_BASE_URL'],
    [{ RATE_LIMITS: 'free=ten/60' }, 'RATE_LIMITS'],
    [{ RATE_LIMITS: 'gold=10/60' }, 'RATE_LIMITS'],
    [{ DPP_ENV: 'production', DPP_SEED_FILE: 'seed.json' }, 'DPP_SEED_FILE'],
    [{ RETENTION_DAYS: '0' }, 'RETENTION_DAYS'],
    [{ DATABASE_POOL_SIZE: '1' }, 'DATABASE_POOL_SIZE'],
    [{ DATABASE_POOL_SIZE: 'ten' }, 'DATABASE_POOL_SIZE'],
    [{ DATABASE_POOL_SIZE: '1001' }, 'DATABASE_POOL_SIZE'],
    [{ LOG_SEQUENCE_GAP_MS: '-1' }, 'LOG_SEQUENCE_GAP_MS'],
    [{ LOG_SEQUENCE_GAP_MS: '60001' }, 'LOG_SEQUENCE_GAP_MS'],
    [{ HEAP_GROWTH_PERCENT: '-5' }, 'HEAP_GROWTH_PERCENT'],
    [{ HEAP_GROWTH_PERCENT: '1001' }, 'HEAP_GROWTH_PERCENT'],
    [{ SECRETS_KEY: 'too-short' }, 'SECRETS_KEY'],
    [{ SECRETS_KEY: 'ab'.repeat(31) }, 'SECRETS_KEY'],
    [{ SECRETS_KEY_PREVIOUS: 'ab'.repeat(32) }, 'SECRETS_KEY_PREVIOUS'],
  ])('refuses %o naming %s', (env, variable) => {
    let err: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(variable);
    expect((err as ConfigError).message.startsWith(`${variable}: `)).toBe(true);
    expect((err as ConfigError).message).not.toContain('\n');
  });

  it('reads rate budgets from configuration, keeping defaults for tiers not named', () => {
    const c = loadConfig({ RATE_LIMITS: 'free=5/10, enterprise=100/1' });
    expect(c.rateLimits.free).toEqual({ limit: 5, windowSeconds: 10 });
    expect(c.rateLimits.enterprise).toEqual({ limit: 100, windowSeconds: 1 });
    expect(c.rateLimits.mid_market.limit).toBe(6000);
  });

  it('accepts a seed file outside production', () => {
    expect(loadConfig({ DPP_ENV: 'test', DPP_SEED_FILE: 'seed.json' }, '/srv').seedFile).toBe(
      '/srv/seed.json',
    );
  });
});
