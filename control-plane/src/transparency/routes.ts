import { z } from 'zod';
import { LabelProofSchema } from '@dpp/shared';
import { ApiError, publicRoute, type RouteDef } from '../http/index.js';
import { parseKey } from '../public/index.js';
import { type ProofDeps, labelProof } from './proof.js';

const KeyParams = z.object({ gtin: z.string().max(14), serial: z.string().max(100) });
const SizeParam = z.coerce
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1);
const ConsistencyQuery = z.object({ first: SizeParam, second: SizeParam });

const TreeHeadSchema = z
  .object({ treeHead: z.string().meta({ description: 'Compact JWS (EdDSA, typ dpp-tree-head+jws)' }) })
  .meta({ id: 'SignedTreeHead' });
const ConsistencySchema = z
  .object({
    first: z.number().int(),
    second: z.number().int(),
    proof: z.array(z.string()).meta({ description: 'RFC 9162 §2.1.4 consistency proof, lower-case hex' }),
  })
  .meta({ id: 'ConsistencyProof' });

/** The label proof and the transparency log's public reads (docs/label-proof.md). */
export function transparencyRoutes(deps: ProofDeps): RouteDef[] {
  return [
    publicRoute({
      method: 'get',
      path: '/api/v2/public/labels/{gtin}/{serial}/proof',
      operationId: 'getLabelProof',
      summary: 'The proof of one printed label: device evidence, seal receipt, EPCIS event, log inclusion',
      description:
        'No credential; CORS; per-IP budget `public`. Every seal of the label (GTIN + serial), oldest first: the ' +
        'evidence bundle the device signed, the control plane’s statement about that device, the seal receipt, the ' +
        'EPCIS commissioning event it names and the receipt’s inclusion proof under the newest signed tree head ' +
        '(`log` null until the sequencer has appended it). `label.status` is voided once the serial was voided. ' +
        '404 LABEL_PROOF_NOT_FOUND when the label was never sealed or its passport is not served publicly; 404 ' +
        'PASSPORT_AMBIGUOUS when the key names labels of more than one publisher. Format: docs/label-proof.md.',
      tags: ['Public'],
      auth: 'none',
      ipLimit: { budget: 'public' },
      request: { params: KeyParams },
      responses: { 200: { description: 'The label proof', schema: LabelProofSchema } },
      errors: ['INVALID_GTIN', 'INVALID_SERIAL', 'LABEL_PROOF_NOT_FOUND', 'PASSPORT_AMBIGUOUS'],
      handler: async ({ params }) => {
        const key = parseKey(`/01/${params.gtin}/21/${encodeURIComponent(params.serial)}`, params.gtin);
        return {
          status: 200,
          body: await labelProof(deps, key.gtin, key.serial),
          headers: { 'Cache-Control': 'no-cache' },
        };
      },
    }),
    publicRoute({
      method: 'get',
      path: '/api/v2/public/log/tree-head',
      operationId: 'getTreeHead',
      summary: 'The newest signed tree head of the transparency log of seal receipts',
      description:
        'No credential; CORS. `{ treeHead }`: a compact JWS (EdDSA, typ `dpp-tree-head+jws`, keys at ' +
        'GET /api/v2/public/signing-keys) over `{ iss, log, treeSize, rootHash, timestamp }`. A head is signed ' +
        'whenever the log grows and at least every LOG_TREE_HEAD_MAX_AGE_MS. 503 SERVICE_UNAVAILABLE before the ' +
        'first head is signed (a second after the first start).',
      tags: ['Public'],
      auth: 'none',
      ipLimit: { budget: 'public' },
      responses: { 200: { description: 'The newest signed tree head', schema: TreeHeadSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async () => {
        const head = await deps.log.latestHead();
        if (!head) {
          throw new ApiError('SERVICE_UNAVAILABLE', 'The log has not signed its first tree head yet', {
            headers: { 'Retry-After': '1' },
          });
        }
        return { status: 200, body: { treeHead: head.tree_head }, headers: { 'Cache-Control': 'no-cache' } };
      },
    }),
    publicRoute({
      method: 'get',
      path: '/api/v2/public/log/consistency',
      operationId: 'getConsistencyProof',
      summary: 'A consistency proof between two sizes of the transparency log',
      description:
        'No credential; CORS. RFC 9162 §2.1.4: proves the log of `second` leaves extends the log of `first` leaves ' +
        'unchanged (1 <= first <= second <= the newest signed head’s size). A verifier asks for one from each tree ' +
        'head it remembers to the newest. 400 VALIDATION_ERROR naming the parameter otherwise.',
      tags: ['Public'],
      auth: 'none',
      ipLimit: { budget: 'public' },
      request: { query: ConsistencyQuery },
      responses: { 200: { description: 'The consistency proof', schema: ConsistencySchema } },
      handler: async ({ query }) => {
        const head = await deps.log.latestHead();
        const size = head?.tree_size ?? 0;
        if (query.second > size) {
          throw ApiError.validation('second', `The newest signed tree head has ${size} leaves`, {
            treeSize: size,
          });
        }
        if (query.first > query.second) {
          throw ApiError.validation('first', 'first must not exceed second', { second: query.second });
        }
        return {
          status: 200,
          body: {
            first: query.first,
            second: query.second,
            proof: await deps.log.consistency(query.first, query.second),
          },
          headers: { 'Cache-Control': 'public, max-age=31536000, immutable' },
        };
      },
    }),
  ];
}
