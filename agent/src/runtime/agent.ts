/**
 * The Agent: builds every part from the configuration and the enrollment in the data folder, and runs
 * them. The composition root of the agent; nothing else wires parts together.
 */
import path from 'node:path';
import { ControlPlaneClient, joinUrl, type FetchLike } from '../api/index.js';
import type { AgentConfig } from '../config/index.js';
import {
  startConsoleServer,
  type ConsoleBackend,
  type ConsoleEventListener,
  type ConsoleServer,
} from '../console/index.js';
import { remoteJwks, verifyEnvelope } from '../envelope/index.js';
import { AgentError } from '../errors.js';
import { TypedEvents } from '@dpp/shared';
import {
  AGENT_VERSION,
  TokenClient,
  keyFilePath,
  loadKeyFile,
  readIdentity,
  type Identity,
} from '../identity/index.js';
import { createLogger, type Logger } from '../log.js';
import { BrokerLogin, MqttLink, type MqttState } from '../mqtt/index.js';
import { Outbox } from '../outbox/index.js';
import { createPrinterDriver } from '../printers/index.js';
import { createScanner, type Scanner } from '../scanners/index.js';
import { DATABASE_FILE, openAgentDatabase, type AgentDatabase } from '../store/index.js';
import type { PrinterTransport } from '../transports/index.js';
import {
  HumanGate,
  JobJournal,
  PrinterWorker,
  type JournalEntry,
  type JobStepEvent,
  type ManualScan,
  type PrinterView,
  type Supervisor,
} from '../jobs/index.js';
import { agentStatus, jobDetail, type AgentJobView, type AgentStatusView } from './views.js';
import { AgentMetrics } from './metrics.js';

export interface AgentOptions {
  /** The logger; one at `config.logLevel` on stderr by default. */
  log?: Logger;
  now?: () => number;
  fetch?: FetchLike;
  /** Transports handed in by printer name (a simulator, a test double); the configured ones otherwise. */
  transports?: Record<string, PrinterTransport>;
  /** Scanners handed in by printer name. */
  scanners?: Record<string, Scanner>;
  /** The console page's folder (the desktop app's bundled copy); `console/ui/` by default. */
  consoleUiDir?: string | null;
}

export type AgentEvents = {
  job: [event: JobStepEvent];
  printer: [view: PrinterView];
  connection: [view: { controlPlane: 'reachable' | 'unreachable'; mqtt: MqttState }];
  outbox: [counts: Record<string, number>];
};

interface Parts {
  identity: Identity;
  baseUrl: string;
  db: AgentDatabase;
  journal: JobJournal;
  outbox: Outbox;
  humans: HumanGate;
  workers: PrinterWorker[];
  scanners: Scanner[];
  mqtt: MqttLink | null;
}

export class Agent implements ConsoleBackend {
  readonly events: TypedEvents<AgentEvents>;
  private console: ConsoleServer | null = null;
  private readonly lineMetrics = new AgentMetrics();
  private stopped = false;
  readonly startedAt: string;

  private constructor(
    readonly config: AgentConfig,
    private readonly parts: Parts,
    readonly log: Logger,
  ) {
    this.events = new TypedEvents<AgentEvents>((event, err) =>
      log.error({ event, err }, 'agent listener failed'),
    );
    this.startedAt = new Date().toISOString();
  }

  /** Loads the enrollment, builds every part and starts them. */
  static async start(config: AgentConfig, options: AgentOptions = {}): Promise<Agent> {
    const log = options.log ?? createLogger({ level: config.logLevel });
    const now = options.now ?? Date.now;
    const identity = await readIdentity(config.dataDir);
    const key = await loadKeyFile(keyFilePath(config.dataDir));
    if (key.kid !== identity.keyThumbprint)
      throw new AgentError('KEY_INVALID', 'the device key does not match the enrolled one (identity.json)');
    const baseUrl = (config.controlPlaneUrl ?? identity.controlPlaneUrl).replace(/\/+$/, '');
    const timeoutMs = config.http.timeoutMs;
    const tokens = new TokenClient({
      identity,
      key,
      baseUrl,
      timeoutMs,
      log: log.child({ ns: 'token' }),
      now,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    const client = new ControlPlaneClient({
      baseUrl,
      tokens,
      timeoutMs,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    const jwks = remoteJwks({ url: joinUrl(baseUrl, '/.well-known/jwks.json'), timeoutMs });
    const verify = async (envelope: string) =>
      (
        await verifyEnvelope(envelope, {
          keys: jwks,
          deviceId: identity.deviceId,
          issuer: identity.issuer,
          now,
        })
      ).claims;

    const db = openAgentDatabase(path.join(config.dataDir, DATABASE_FILE));
    const journal = new JobJournal(db, now);
    // Attempts left unfinished: the process stopped or died mid-job. Those on a configured printer are
    // resumed if the control plane still says they are ours (see PrinterWorker); the rest are abandoned to
    // their leases. Whatever their printers still hold is cleared first, so it never prints later.
    const configured = new Set(config.printers.map((p) => p.name));
    const resumable = new Map<string, JournalEntry[]>();
    for (const left of journal.unfinished()) {
      // Oldest first; a printer works on several jobs at once (the pipeline), so each may have several.
      if (configured.has(left.printer))
        resumable.set(left.printer, [...(resumable.get(left.printer) ?? []), left]);
      else journal.step(left.attemptId, 'abandoned', true);
    }
    journal.prune(config.jobs.keepRecent);
    const outbox = new Outbox({
      db,
      sender: client,
      log: log.child({ ns: 'outbox' }),
      now,
      maxBackoffMs: config.outbox.maxBackoffMs,
      keepSettled: config.outbox.keepDelivered,
    });
    const humans = new HumanGate();
    const mqttUrl = config.mqttEnabled ? (config.mqttUrl ?? identity.mqtt.url) : null;
    const mqtt = mqttUrl
      ? new MqttLink({
          url: mqttUrl,
          deviceId: identity.deviceId,
          tenantId: identity.tenantId,
          login: new BrokerLogin({
            deviceId: identity.deviceId,
            tokens,
            fetchCredentials: (id) => client.mqttCredentials(id),
          }),
          printers: config.printers.map((p) => p.name),
          agentVersion: AGENT_VERSION,
          log: log.child({ ns: 'mqtt' }),
        })
      : null;

    const scanners: Scanner[] = [];
    const parts: Parts = { identity, baseUrl, db, journal, outbox, humans, workers: [], scanners, mqtt };
    const agent = new Agent(config, parts, log);
    for (const p of config.printers) {
      const scanner =
        options.scanners?.[p.name] ?? (p.scanner ? createScanner(`${p.name}-scanner`, p.scanner) : null);
      if (scanner) scanners.push(scanner);
      const worker: PrinterWorker = new PrinterWorker({
        config: p,
        driver: createPrinterDriver(p, options.transports?.[p.name]),
        client,
        poll: config.poll,
        noticesLive: () => mqtt?.state === 'connected',
        pipeline: {
          deviceId: identity.deviceId,
          key,
          client,
          outbox,
          journal,
          humans,
          verify,
          scanner,
          jobs: config.jobs,
          notReadyRetryMs: config.poll.notReadyRetryMs,
          now,
          onStep: (e) => agent.events.emit('job', e),
        },
        log: log.child({ ns: 'jobs' }),
        now,
        onControlPlaneAnswered: () => outbox.retryNow(),
        onView: (view) => {
          agent.events.emit('printer', view);
          mqtt?.publishPrinterStatus({
            printer: view.name,
            state: view.state,
            ...(view.detail ? { detail: view.detail } : {}),
            ...(view.currentJob ? { jobRef: view.currentJob.jobRef } : {}),
            at: view.statusAt ?? new Date(now()).toISOString(),
            waits: view.waits,
          });
        },
      });
      parts.workers.push(worker);
    }
    agent.wire();
    for (const w of parts.workers) {
      const left = resumable.get(w.name);
      if (!left) continue;
      const held = await w.clearHeld().catch((err: unknown) => {
        log.warn({ printer: w.name, err: String(err) }, 'could not clear the printer');
        return 0;
      });
      if (held > 0) log.warn({ printer: w.name, held }, 'cleared formats held from before a crash');
      w.resume(left, held);
    }
    outbox.start();
    mqtt?.start();
    if (config.console.enabled)
      agent.console = await startConsoleServer({
        backend: agent,
        host: config.console.host,
        port: config.console.port,
        log: log.child({ ns: 'console' }),
        supervisors: config.supervisors ?? [],
        ...(options.consoleUiDir !== undefined ? { uiDir: options.consoleUiDir } : {}),
      });
    for (const w of parts.workers) w.start();
    log.info(
      {
        device: identity.deviceId,
        tenant: identity.tenantId,
        printers: config.printers.map((p) => p.name),
        controlPlane: baseUrl,
        mqtt: mqttUrl,
      },
      'agent started',
    );
    return agent;
  }

  private wire(): void {
    const { outbox, mqtt, workers } = this.parts;
    this.events.on('job', (e) => this.lineMetrics.observe(e));
    const connection = () =>
      this.events.emit('connection', {
        controlPlane: outbox.controlPlaneReachable ? 'reachable' : 'unreachable',
        mqtt: mqtt?.state ?? 'disabled',
      });
    outbox.events.on('reachable', () => {
      connection();
      for (const w of workers) w.wake();
    });
    outbox.events.on('unreachable', connection);
    outbox.events.on('changed', () => this.events.emit('outbox', outbox.counts()));
    mqtt?.events.on('work', () => {
      for (const w of workers) w.wake();
    });
    mqtt?.events.on('state', (state) => {
      connection();
      // Connected: notices may have been missed. Lost: nothing will tell the printers about work any more, so
      // they claim once now and then poll every poll.intervalMs until it is back.
      if (state === 'connected' || state === 'disconnected') for (const w of workers) w.wake();
    });
  }

  get identity(): Identity {
    return this.parts.identity;
  }

  /** The console's URL (null when it is off). */
  get consoleUrl(): string | null {
    return this.console?.url ?? null;
  }

  get outbox(): Outbox {
    return this.parts.outbox;
  }

  get journal(): JobJournal {
    return this.parts.journal;
  }

  status(): AgentStatusView {
    return agentStatus(this, this.parts);
  }

  /** The line's figures as Prometheus text (`GET /metrics`; runtime/metrics.ts). */
  metrics(): string {
    return this.lineMetrics.render(
      this.parts.workers.map((w) => w.view()),
      this.parts.outbox.counts(),
    );
  }

  job(jobRef: string): AgentJobView | null {
    return jobDetail(jobRef, this.parts);
  }

  preview(jobRef: string): Buffer | null {
    return this.parts.journal.preview(jobRef);
  }

  currentAttempt(jobRef: string): string | null {
    return this.parts.workers.flatMap((w) => w.active).find((r) => r.jobRef === jobRef)?.attemptId ?? null;
  }

  private running(jobRef: string) {
    const run = this.parts.workers.flatMap((w) => w.active).find((r) => r.jobRef === jobRef);
    if (!run)
      throw new AgentError('NOT_WAITING', `job ${jobRef} is not in progress on this device`, {
        details: { notFound: true },
      });
    return run;
  }

  attest(jobRef: string, supervisor: Supervisor, note?: string): void {
    this.running(jobRef);
    this.parts.humans.attest(jobRef, supervisor, note);
    this.log.info({ jobRef, supervisor: supervisor.id }, 'supervisor attested');
  }

  fail(jobRef: string, reason: string, detail?: string): void {
    this.running(jobRef).cancel(reason, detail ?? 'failed by an operator at the console');
    this.log.info({ jobRef, reason }, 'operator failed the job');
  }

  reprint(jobRef: string): void {
    this.running(jobRef);
    this.parts.humans.reprint(jobRef);
  }

  scan(jobRef: string, input: ManualScan): void {
    this.running(jobRef);
    this.parts.humans.scan(jobRef, input);
  }

  subscribe(listener: ConsoleEventListener): () => void {
    const offs = [
      this.events.on('job', (e) => listener('job', e)),
      this.events.on('printer', (v) => listener('printer', v)),
      this.events.on('connection', (c) => listener('connection', c)),
      this.events.on('outbox', (o) => listener('outbox', o)),
    ];
    return () => offs.forEach((off) => off());
  }

  /** Waits until nothing is pending in the outbox (tests, a graceful stop), or `timeoutMs`. */
  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.parts.outbox.counts().pending > 0) {
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
    return true;
  }

  /**
   * Stops claiming; jobs in progress report FAILED (agent_stopped) so they are re-claimable at once;
   * the outbox gets `drainMs` to deliver; everything is closed. Rows not delivered wait in the file.
   */
  async stop(options: { drainMs?: number } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const p = this.parts;
    await Promise.all(p.workers.map((w) => w.stop()));
    if (p.outbox.controlPlaneReachable) await this.drain(options.drainMs ?? 3000);
    await p.mqtt?.stop();
    await p.outbox.stop();
    await this.console?.close();
    for (const w of p.workers) await w.close();
    for (const s of p.scanners) await s.close().catch(() => undefined);
    p.db.close();
    this.log.info('agent stopped');
  }
}

/** Starts an agent for a validated configuration (see `parseAgentConfig` / `loadConfig`). */
export function startAgent(config: AgentConfig, options: AgentOptions = {}): Promise<Agent> {
  return Agent.start(config, options);
}
