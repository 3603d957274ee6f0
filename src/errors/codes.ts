/**
 * Every error code `@minara/agent` can raise, with the one-line meaning `docs/errors.md` repeats.
 * A test keeps that page and this table in step, so add a code here and there together.
 */
export const ERROR_CODES = {
  // configuration and input
  CONFIG_INVALID: 'A configuration value or option is missing or of the wrong shape.',
  INVALID_ARGUMENT: 'An argument to a public function is missing or of the wrong shape.',
  UNSUPPORTED_RUNTIME: 'The Node.js version is older than the package supports (22.12); nothing was loaded that would crash it.',
  NOT_FOUND: 'A record addressed by id does not exist (or is not visible in this scope).',
  SESSION_FORBIDDEN: 'The session belongs to another user; nothing was read, decided or executed.',
  // tools
  TOOL_DEFINITION_INVALID: 'A tool definition is malformed (name, schema, tier, tool set).',
  TOOL_NOT_FOUND: 'No tool is registered under that name.',
  TOOL_UNAVAILABLE: 'The tool is registered but its availability check (checkFn) says no.',
  TOOL_INPUT_INVALID: 'Tool input failed schema validation; the message names each bad field.',
  TOOL_TIMEOUT: 'The tool did not finish within its timeout.',
  TOOL_ABORTED: 'The tool call was cancelled through its AbortSignal.',
  TOOL_EXECUTION_FAILED: 'The tool handler threw an error.',
  TOOL_BLOCKED: 'A before-hook or policy blocked the call.',
  TOOL_SET_NOT_ALLOWED: "The tool's tool set is outside the turn's allowed tool sets.",
  RISK_CEILING_EXCEEDED: "The tool's effective tier is above the turn's risk ceiling.",
  SIDE_EFFECTS_REFUSED: 'The call runs where only side-effect-free tools may (run_code inputs), and the tool is not declared `sideEffects: false`.',
  APPROVAL_REQUIRED: 'The call needs a human approval; an approval request was persisted.',
  MANUAL_ONLY_AUTONOMOUS: 'A MANUAL_ONLY tool was called from an autonomous source (cron, webhook, workflow).',
  GRANT_REQUIRED: 'An autonomous call needs a stored grant that covers it, and none does.',
  UNTRUSTED_CONTENT: 'A MANUAL_ONLY call was proposed after untrusted content (a web page, a search result, an MCP tool, a webhook payload) entered the conversation, and the untrusted-content policy refuses it; or an MCP host tried to write a learning the policy does not allow.',
  GRANT_CAP_EXCEEDED: "A stored grant covers the call, but the order is above its cap per call or beyond what it has left today (UTC).",
  TOOL_SET_DISABLED: "An operator turned this tool set off for the call's user (a capability switch).",
  STAGE_NOT_ALLOWED: 'An autonomous turn classified as discover cannot execute a fund-moving tool, even under a grant.',
  EMERGENCY_STOP: 'The emergency stop is engaged; only READ_ONLY tools run.',
  STOP_RELEASE_FORBIDDEN: 'A user tried to release (or engage) a stop above their level: the global stop or one an operator engaged is released by an operator only.',
  REPEATED_BLOCKED_CALL: 'The same blocked call was repeated within a turn and was cut off.',
  CIRCUIT_BREAKER_OPEN: "The user's circuit breaker is tripped; autonomous fund-moving calls are halted until a person resets it.",
  // approvals
  APPROVAL_NOT_FOUND: 'No approval request exists with that id.',
  APPROVAL_INVALID: 'The approval does not verify: bad signature, wrong tool, call, input, session or source.',
  APPROVAL_EXPIRED: 'The approval request expired before it was used.',
  APPROVAL_ALREADY_USED: 'The approval was already used (approvals are single use).',
  APPROVAL_DENIED: 'The approval request was denied.',
  APPROVAL_NOT_DECIDED: 'The approval request has not been approved or denied yet.',
  // sandbox and files
  SANDBOX_ESCAPE: 'A path would resolve outside the sandbox root.',
  FILE_TOO_LARGE: 'A file or content exceeds the configured size limit.',
  FILE_EMPTY: 'An uploaded file has no bytes.',
  FILE_UNREADABLE: 'An uploaded file cannot be parsed as the type it claims (a malformed XLSX or CSV).',
  // artifacts
  ARTIFACT_NOT_FOUND: "No artifact with that id or URI exists for this user; the message lists the user's recent artifact URIs.",
  ARTIFACT_INVALID: 'An artifact input is malformed (a chart spec that does not compile, a URL in chart data, bad CSV, an empty report).',
  // backtests
  BACKTEST_DATA_INVALID: 'Backtest bars are malformed (a gap, duplicate, out-of-order row, non-positive price, high < low); the message names the file and row.',
  // storage
  RUNTIME_CLOSED: 'The runtime (the app) is closing or closed: no new turn starts, and a turn still running past the close timeout was aborted.',
  STORAGE_ERROR: 'The storage engine failed (I/O, constraint, corruption).',
  STORAGE_BUSY: 'The database stayed locked past the busy timeout and retries.',
  STORAGE_UNAVAILABLE: 'The database server cannot be reached (refused, dropped or timed out); the message names host and port.',
  MIGRATION_FAILED: 'A schema migration failed; the transaction was rolled back.',
  // skills
  SKILL_INVALID: 'A skill definition or SKILL.md package is malformed.',
  SKILL_NOT_FOUND: 'No skill is registered under that id.',
  SKILL_ACTIVATION_REFUSED: 'A skill may not be activated from this source.',
  SKILL_LICENSE_REFUSED: 'An external skill was refused because of its licence.',
  // memory
  MEMORY_INVALID: 'A memory write or query has an invalid field (content, category, limit).',
  MEMORY_TOO_LARGE: 'Memory content exceeds the size limit.',
  // learning
  LEARNING_INVALID: 'A learning input (methodology, preference, seed file, reflection answer) has an invalid field.',
  LEARNING_TRANSITION_REFUSED: 'A methodology or preference cannot move to that state (not proposed, quarantined, already decided).',
  // workspace
  WORKSPACE_CONFLICT: 'The workspace file changed since it was read (sha256 mismatch).',
  WORKSPACE_FILE_NOT_EDITABLE: 'The workspace file name is not on the editable whitelist.',
  WORKSPACE_LOCK_HELD: 'Another process holds the workspace lock.',
  // runtime and models
  MODEL_NOT_CONFIGURED: 'No language model is configured.',
  MODEL_ERROR: 'The language model call failed.',
  CASSETTE_MISS: 'A replayed model call has no recording in the cassette; the message diffs it against the nearest recorded request and nothing was sent to a model.',
  CONTEXT_OVERFLOW: 'The conversation does not fit the context window even after compaction.',
  WORKFLOW_INVALID: 'A workflow definition is malformed; the message names the bad step.',
  TURN_ABORTED: 'The turn was cancelled.',
  // providers
  PROVIDER_ERROR: 'An external provider returned an error or malformed data.',
  PROVIDER_RATE_LIMITED: 'An external provider rate-limited the request (429).',
  PROVIDER_TIMEOUT: 'An external provider did not answer in time.',
  // MCP
  MCP_UNAVAILABLE: 'The MCP server is not connected (it failed to start, crashed and is restarting, or was closed).',
  MCP_ERROR: 'The MCP server answered a tool call with an error, or did not answer in time.',
  // gateway
  HTTP_BAD_REQUEST: 'The HTTP request body or parameters are invalid.',
  HTTP_UNAUTHORIZED: 'The bearer token is missing or wrong.',
  HTTP_PAYLOAD_TOO_LARGE: 'The HTTP request body exceeds the limit.',
  HTTP_HOST_NOT_ALLOWED: 'The request names a Host the gateway does not answer to (DNS rebinding defence); add public names with allowedHosts.',
  HTTP_CROSS_SITE: 'A state-changing request from another site (a foreign Origin, Sec-Fetch-Site, or a POST a cross-site form could send) was refused.',
  HTTP_FORBIDDEN: 'The request is understood but not allowed on that record (e.g. editing a memory the agent wrote).',
  HTTP_METHOD_NOT_ALLOWED: 'The route exists but does not accept that HTTP method.',
  HTTP_UNSUPPORTED_MEDIA_TYPE: 'The request body is not application/json.',
  HTTP_CONFLICT: 'The request conflicts with the current state (a turn is already running, an approval was already decided).',
  HTTP_UNAVAILABLE: 'The gateway is shutting down and accepts no new turns.',
  HTTP_TOO_MANY_REQUESTS: 'Not now: the request is refused for a limit that resets (e.g. the daily budget of autonomous turns is spent).',
  // catch-all
  INTERNAL: 'An unexpected internal error.',
} as const;

/** The string-literal union of every error code. */
export type MinaraErrorCode = keyof typeof ERROR_CODES;
