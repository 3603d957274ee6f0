import { EventEmitter } from 'eventemitter3';

/**
 * The app-level events background tasks subscribe to. Each payload is one readonly object.
 * Later modules add their events here so the bus stays one typed map.
 */
export interface MinaraBusEvents {
  'tool:dispatched': {
    readonly toolName: string;
    readonly decision: string;
    readonly sessionId?: string | undefined;
    readonly traceId?: string | undefined;
    readonly durationMs: number;
  };
  'approval:requested': { readonly approvalId: string; readonly toolName: string; readonly sessionId?: string | undefined };
  'approval:decided': { readonly approvalId: string; readonly approved: boolean };
  /** A stop was engaged or released: a user's (`userId`) or the global one (no `userId`). */
  'emergency-stop:changed': { readonly engaged: boolean; readonly reason?: string | undefined; readonly userId?: string | undefined };
  'memory:written': { readonly id: number; readonly userId: string; readonly agentId?: string | undefined; readonly category: string };
  'memory:deleted': { readonly id: number; readonly userId: string; readonly hard: boolean };
  'fact:recorded': { readonly id: number; readonly userId: string; readonly agentId?: string | undefined };
  /** A fund-moving execution was written to `trade_history`. */
  'trade:recorded': { readonly userId: string; readonly agentId?: string | undefined; readonly tradeId: number; readonly asset: string; readonly action: string };
  /** A close changed an opening trade (realised P&L; `outcome` once fully closed). */
  'trade:outcome_updated': { readonly userId: string; readonly agentId?: string | undefined; readonly tradeId: number; readonly asset: string; readonly outcome?: string | undefined };
  /** A methodology was created, accepted (a proposal put on trial), scored, proposed for graduation, graduated, quarantined or reinstated. */
  'methodology:changed': {
    readonly userId: string;
    readonly agentId?: string | undefined;
    readonly methodologyId: number;
    readonly change: 'created' | 'accepted' | 'scored' | 'graduation_proposed' | 'graduation_withdrawn' | 'graduated' | 'quarantined' | 'reinstated';
    readonly state: string;
    readonly confidence: number;
    readonly uses: number;
  };
  /** A learned preference was proposed, activated or rejected. */
  'preference:changed': { readonly userId: string; readonly agentId?: string | undefined; readonly preferenceId: number; readonly state: string; readonly dimension: string };
  /** A role-memory case was reflected (lessons written). */
  'role_memory:reflected': { readonly userId: string; readonly agentId?: string | undefined; readonly caseId: number; readonly classification: string; readonly lessons: number };
  /** The history mirror inserted perp fills (`inserted` > 0). */
  'perps_fills:recorded': { readonly userId: string; readonly agentId?: string | undefined; readonly subAccountId: string; readonly inserted: number };
  /** The history mirror inserted spot activities (`inserted` > 0). */
  'external_spot:recorded': { readonly userId: string; readonly agentId?: string | undefined; readonly inserted: number };
  /** A personalization rebuild wrote (or skipped writing) facts. */
  'personalization:rebuilt': { readonly userId: string; readonly agentId?: string | undefined; readonly written: number; readonly skipped?: string | undefined };
  /**
   * What a person's open views show changed for this user (the post-turn fan-out's cache invalidation, agent-loop
   * §5): the web app reloads those views (`GET /v1/events`) instead of polling.
   */
  'views:invalidated': { readonly userId: string; readonly views: readonly AppView[]; readonly reason: string };
  'turn:ended': {
    readonly sessionId: string;
    readonly turnId: string;
    readonly source: string;
    readonly text: string;
    readonly toolsUsed: readonly string[];
  };
}

/** A view of the person's data a client may cache: the portfolio, memories, pending approvals, the audit trail. */
export type AppView = 'portfolio' | 'memory' | 'approvals' | 'audit';

/** The views a client may cache, in a stable order. */
export const APP_VIEWS: readonly AppView[] = ['portfolio', 'memory', 'approvals', 'audit'];

/** The typed app-level event bus (an `eventemitter3` emitter). */
export type MinaraBus = EventEmitter<{ [K in keyof MinaraBusEvents]: (payload: MinaraBusEvents[K]) => void }>;

/**
 * Create the app-level event bus.
 *
 * @example
 * ```ts
 * const bus = createEventBus();
 * bus.on('memory:written', ({ id }) => console.log('wrote', id));
 * ```
 */
export function createEventBus(): MinaraBus {
  return new EventEmitter() as MinaraBus;
}
