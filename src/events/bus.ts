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
  'emergency-stop:changed': { readonly engaged: boolean; readonly reason?: string | undefined };
  'memory:written': { readonly id: number; readonly userId: string; readonly agentId?: string | undefined; readonly category: string };
  'memory:deleted': { readonly id: number; readonly userId: string; readonly hard: boolean };
  'fact:recorded': { readonly id: number; readonly userId: string; readonly agentId?: string | undefined };
  'turn:ended': {
    readonly sessionId: string;
    readonly turnId: string;
    readonly source: string;
    readonly text: string;
    readonly toolsUsed: readonly string[];
  };
}

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
