import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_products.js';
import * as m0003 from './0003_webhooks.js';
import * as m0004 from './0004_passports.js';
import * as m0005 from './0005_carriers.js';
import * as m0006 from './0006_devices.js';
import * as m0007 from './0007_aidc.js';
import * as m0008 from './0008_rate_windows.js';
import * as m0009 from './0009_send_gate.js';
import * as m0010 from './0010_one_open_job_per_serial.js';
import * as m0011 from './0011_market_status.js';
import * as m0012 from './0012_tenant_slug.js';
import * as m0013 from './0013_security_advisories.js';
import * as m0014 from './0014_eu_registry.js';
import * as m0015 from './0015_compliance.js';
import * as m0016 from './0016_attempt_passport_version.js';
import * as m0017 from './0017_seal_receipts.js';
import * as m0018 from './0018_device_keys.js';
import * as m0019 from './0019_transparency_log.js';
import * as m0020 from './0020_print_loop_indexes.js';
import * as m0021 from './0021_epc_schemes.js';
import * as m0022 from './0022_resolver_serial_index.js';
import * as m0023 from './0023_serials_keyed_by_number.js';
import * as m0024 from './0024_product_serials_by_batch.js';

/**
 * Forward-only, numbered migrations. Add a file `NNNN_name.ts` and list it here; never edit one
 * that has shipped.
 */
const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_products': m0002,
  '0003_webhooks': m0003,
  '0004_passports': m0004,
  '0005_carriers': m0005,
  '0006_devices': m0006,
  '0007_aidc': m0007,
  '0008_rate_windows': m0008,
  '0009_send_gate': m0009,
  '0010_one_open_job_per_serial': m0010,
  '0011_market_status': m0011,
  '0012_tenant_slug': m0012,
  '0013_security_advisories': m0013,
  '0014_eu_registry': m0014,
  '0015_compliance': m0015,
  '0016_attempt_passport_version': m0016,
  '0017_seal_receipts': m0017,
  '0018_device_keys': m0018,
  '0019_transparency_log': m0019,
  '0020_print_loop_indexes': m0020,
  '0021_epc_schemes': m0021,
  '0022_resolver_serial_index': m0022,
  '0023_serials_keyed_by_number': m0023,
  '0024_product_serials_by_batch': m0024,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
