/**
 * Supervisor sessions of the console. A supervisor signs in with the PIN (or badge code) configured for
 * them on this device and gets a short-lived bearer token, kept in memory by the console page; attesting,
 * failing and re-printing need one, and the attestation names the session's supervisor, never one taken
 * from a request body. Sessions end after `idleMs` without an action, after `maxMs` in any case, on
 * sign-out and when the agent stops (they live in this process only).
 *
 * Guessing is bounded per console: at most `maxFailures` wrong PINs in any `windowMs` (checks in flight
 * count), then every attempt is refused until the oldest failure leaves the window.
 */
import { randomBytes } from 'node:crypto';
import { verifyPin } from './pin.js';

/** A supervisor as configured on the device (`supervisors[]` of the agent config). */
export interface SupervisorAccount {
  id: string;
  name: string;
  pinHash: string;
}

export interface SessionView {
  supervisor: { id: string; name: string };
  /** When the session ends unless it is used again (ISO 8601). */
  expiresAt: string;
}

export type SignInResult =
  | { ok: true; token: string; session: SessionView }
  | { ok: false; code: 'WRONG_PIN' | 'PIN_NOT_UNIQUE' }
  | { ok: false; code: 'TOO_MANY_ATTEMPTS'; retryAfterMs: number };

export interface SupervisorSessionsOptions {
  supervisors: readonly SupervisorAccount[];
  now?: () => number;
  /** Idle time after which a session ends; 10 minutes by default. */
  idleMs?: number;
  /** Longest life of a session, used or not; 12 hours by default. */
  maxMs?: number;
  /** Wrong PINs allowed per window; 5 by default. */
  maxFailures?: number;
  /** The window of the attempt limit; one minute by default. */
  windowMs?: number;
}

interface Session {
  supervisor: { id: string; name: string };
  createdAt: number;
  usedAt: number;
}

/** More open sessions than this and the oldest is dropped (a page that never signs out). */
const MAX_SESSIONS = 64;

export class SupervisorSessions {
  private readonly sessions = new Map<string, Session>();
  private failures: number[] = [];
  private inFlight = 0;
  private readonly now: () => number;
  private readonly idleMs: number;
  private readonly maxMs: number;
  private readonly maxFailures: number;
  private readonly windowMs: number;

  constructor(private readonly options: SupervisorSessionsOptions) {
    this.now = options.now ?? Date.now;
    this.idleMs = options.idleMs ?? 10 * 60_000;
    this.maxMs = options.maxMs ?? 12 * 3600_000;
    this.maxFailures = options.maxFailures ?? 5;
    this.windowMs = options.windowMs ?? 60_000;
  }

  /** Whether actions need a session: true as soon as one supervisor is configured. */
  get required(): boolean {
    return this.options.supervisors.length > 0;
  }

  /**
   * Checks a PIN against every configured supervisor (or only the one named by `id`, for a badge id +
   * PIN sign-in). A PIN that two supervisors share signs nobody in: the attestation must name one person.
   */
  async signIn(pin: string, id?: string): Promise<SignInResult> {
    const now = this.now();
    this.failures = this.failures.filter((t) => t > now - this.windowMs);
    if (this.failures.length + this.inFlight >= this.maxFailures) {
      const oldest = this.failures[0];
      return {
        ok: false,
        code: 'TOO_MANY_ATTEMPTS',
        retryAfterMs: oldest === undefined ? 1000 : Math.max(1000, oldest + this.windowMs - now),
      };
    }
    const candidates = this.options.supervisors.filter((s) => id === undefined || s.id === id);
    this.inFlight++;
    let matches: SupervisorAccount[];
    try {
      const checks = await Promise.all(candidates.map((s) => verifyPin(pin, s.pinHash)));
      matches = candidates.filter((_, i) => checks[i]);
    } finally {
      this.inFlight--;
    }
    if (matches.length === 0) {
      this.failures.push(this.now());
      return { ok: false, code: 'WRONG_PIN' };
    }
    if (matches.length > 1) return { ok: false, code: 'PIN_NOT_UNIQUE' };
    const account = matches[0]!;
    const token = randomBytes(32).toString('base64url');
    const at = this.now();
    const session: Session = {
      supervisor: { id: account.id, name: account.name },
      createdAt: at,
      usedAt: at,
    };
    this.sessions.set(token, session);
    this.prune();
    return { ok: true, token, session: this.view(session) };
  }

  /**
   * The session of a token, or null (unknown, expired). `touch` counts this as use and restarts the idle
   * time: actions do, merely looking at the session does not.
   */
  get(token: string | null | undefined, touch = false): SessionView | null {
    if (!token) return null;
    const s = this.sessions.get(token);
    if (!s) return null;
    if (this.expired(s)) {
      this.sessions.delete(token);
      return null;
    }
    if (touch) s.usedAt = this.now();
    return this.view(s);
  }

  /** Ends a session; false when there was none. */
  signOut(token: string | null | undefined): boolean {
    return token ? this.sessions.delete(token) : false;
  }

  private expired(s: Session): boolean {
    const now = this.now();
    return now >= s.usedAt + this.idleMs || now >= s.createdAt + this.maxMs;
  }

  private view(s: Session): SessionView {
    const end = Math.min(s.usedAt + this.idleMs, s.createdAt + this.maxMs);
    return { supervisor: { ...s.supervisor }, expiresAt: new Date(end).toISOString() };
  }

  private prune(): void {
    for (const [token, s] of this.sessions) if (this.expired(s)) this.sessions.delete(token);
    while (this.sessions.size > MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
  }
}
