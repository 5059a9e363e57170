import type { PassportState } from './model.js';

/**
 * The passport command machine: the one table both POST /passports/commands enforces and
 * GET /passports/commands publishes.
 *
 * A row either moves the passport (`to`, possibly the same state) or is guarded (`guard`): the command is
 * known in that state but refused, 403 GUARD_REJECTED. A command with no row for the current state is
 * 409 INVALID_TRANSITION. Rows marked `spec` are api-v2.md's table, kept exactly, including the harmful
 * SUBMIT from published.
 */
export const COMMAND_NAMES = [
  'SUBMIT',
  'APPROVE',
  'REJECT',
  'EDIT',
  'PUBLISH',
  'SUSPEND',
  'REINSTATE',
  'REVOKE',
  'ARCHIVE',
  'RECYCLE',
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export interface TransitionRow {
  command: CommandName;
  from: PassportState;
  /** The state after the command; equal to `from` when the command changes content, not state. */
  to?: PassportState;
  /** Refused in this state with 403 GUARD_REJECTED, for this reason. */
  guard?: string;
  /** A warning returned with the result (and shown in the catalog). */
  warning?: string;
  /** From api-v2.md's table (the others are ours). */
  spec?: boolean;
}

const FROZEN =
  'content of a passport under review or published is immutable; mint a version with POST /dpp/{productId}/publish';
const ENDED = 'the passport has ended; its content can no longer change';

export const TRANSITIONS: readonly TransitionRow[] = [
  { command: 'SUBMIT', from: 'draft', to: 'submitted', spec: true },
  {
    command: 'SUBMIT',
    from: 'published',
    to: 'submitted',
    spec: true,
    warning:
      'SUBMIT on a published passport takes it off the public route: GET /api/v2/public/passport/{uid} now answers 404 until it is approved and published again',
  },
  { command: 'APPROVE', from: 'submitted', to: 'approved', spec: true },
  { command: 'REJECT', from: 'submitted', to: 'draft' },
  { command: 'REJECT', from: 'approved', to: 'draft' },
  { command: 'EDIT', from: 'draft', to: 'draft' },
  { command: 'EDIT', from: 'submitted', guard: FROZEN },
  { command: 'EDIT', from: 'approved', guard: FROZEN },
  { command: 'EDIT', from: 'published', guard: FROZEN, spec: true },
  { command: 'EDIT', from: 'suspended', guard: FROZEN },
  { command: 'EDIT', from: 'archived', guard: ENDED },
  { command: 'EDIT', from: 'revoked', guard: ENDED },
  { command: 'EDIT', from: 'recycled', guard: ENDED },
  { command: 'PUBLISH', from: 'approved', to: 'published', spec: true },
  { command: 'SUSPEND', from: 'published', to: 'suspended' },
  { command: 'REINSTATE', from: 'suspended', to: 'published' },
  { command: 'REVOKE', from: 'published', to: 'revoked' },
  { command: 'REVOKE', from: 'suspended', to: 'revoked' },
  { command: 'ARCHIVE', from: 'draft', to: 'archived' },
  { command: 'ARCHIVE', from: 'published', to: 'archived' },
  { command: 'ARCHIVE', from: 'suspended', to: 'archived' },
  { command: 'RECYCLE', from: 'published', to: 'recycled' },
  { command: 'RECYCLE', from: 'suspended', to: 'recycled' },
  { command: 'RECYCLE', from: 'archived', to: 'recycled' },
];

/** The row for a command in a state, if any. */
export function findTransition(command: CommandName, from: string): TransitionRow | undefined {
  return TRANSITIONS.find((t) => t.command === command && t.from === from);
}

/** Commands that move (or keep) a passport in a state without a guard: what `details.allowed` lists. */
export function allowedCommands(from: string): CommandName[] {
  return TRANSITIONS.filter((t) => t.from === from && t.to !== undefined).map((t) => t.command);
}
