/**
 * `@minara/agent/gateway`: the HTTP gateway as a web-standard fetch handler, and a Node `http` server
 * for it. `POST /v1/chat` speaks the AI SDK UI message stream protocol, so `useChat` works unchanged.
 *
 * @module
 * @example
 * ```ts
 * import { createGateway, gatewayEnv, serveGateway } from '@minara/agent/gateway';
 *
 * const env = gatewayEnv();                       // GATEWAY_PORT, GATEWAY_HOST, GATEWAY_AUTH_TOKEN
 * const gateway = createGateway({ runtime, storage, tools, memoryFor, workspace, authToken: env.authToken });
 * const served = await serveGateway({ gateway, port: env.port, host: env.host });
 * ```
 */
import { assertSupportedNode } from '../util/node-version';

// Refuse a Node.js older than 22.12 as the package loads, before anything can open the native SQLite addon (it would crash).
assertSupportedNode();

export { createGateway } from './gateway';
export type { Gateway, GatewayJobsSource, GatewayMcpHandler, GatewayOptions, GatewayWebhook, GatewayWorkflowsSource } from './types';
export { isLoopbackHost, serveGateway, type ServedGateway, type ServeGatewayOptions } from './serve';
export { WEBHOOK_TOLERANCE_SECONDS } from './webhook-routes';
export { signWebhook, verifyWebhookSignature } from '../util/webhook-signature';
export { gatewayEnv, type GatewayEnv } from './env';
export { DEFAULT_MAX_BODY_BYTES } from './body';
export { createUIStreamEncoder, type UIStreamEncoder, type UIStreamEncoderOptions } from '../runtime/ui-stream';
export { EDITABLE_MEMORY_SOURCE } from './memory-routes';
export { MAX_EVENT_STREAMS_PER_USER } from './event-routes';
export { HttpError } from './http-error';
export { createJwtAuthenticator, DECIDE_SCOPE, type GatewayAuthenticate, type GatewayIdentity, type GatewayQuota, type JwtAuthenticatorOptions, quotaFromClaim } from './auth';
export { type QuotaOrigin, type QuotaStanding, USER_TURN_SOURCES } from './quotas';
