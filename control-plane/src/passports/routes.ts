import type { Environment, RegistryName } from '../config/index.js';
import type { RouteDef } from '../http/index.js';
import type { SchemaRegistry } from '../schemas/index.js';
import type { Db, SecretBox } from '../store/index.js';
import type { CredentialSigner } from './issuer.js';
import { commandRoutes } from './routes-commands.js';
import { dppRoutes } from './routes-dpps.js';
import { euRegistryRoutes } from './routes-eu-registry.js';
import { generationRoutes } from './routes-generation.js';
import { publicationRoutes } from './routes-publication.js';
import { readRoutes } from './routes-read.js';
import { validationRoutes } from './routes-validations.js';

export interface PassportRouteDeps {
  db: Db;
  secrets: SecretBox;
  registry: SchemaRegistry;
  env: Environment;
  publicBaseUrl: string;
  registryConnectors: Partial<Record<RegistryName, string>>;
  /** The EU registry connector of registerDPP; undefined when none is configured. */
  euRegistryUrl: string | undefined;
  signer: CredentialSigner;
  now: () => number;
  /** Wakes the generation worker after a request is queued. */
  onGenerationQueued?: () => void;
}

/** Every authenticated passport operation; /passports/commands is mounted before /passports/{id}. */
export function passportRoutes(deps: PassportRouteDeps): RouteDef[] {
  return [
    ...generationRoutes(deps),
    ...publicationRoutes(deps),
    ...commandRoutes(deps),
    ...validationRoutes(deps),
    ...readRoutes(deps),
    ...dppRoutes(deps),
    ...euRegistryRoutes(deps),
  ];
}
