/**
 * Writes docs/errors.md from src/errors/codes.ts so the page never drifts from the code.
 * Run: npm run docs:errors
 */
import { writeFileSync } from 'node:fs';
import { ERROR_CODES } from '../src/errors/codes';

const rows = Object.entries(ERROR_CODES)
  .map(([code, meaning]) => `| \`${code}\` | ${meaning} |`)
  .join('\n');

const page = `# Errors

Every error \`@minara/agent\` raises is a \`MinaraError\` with a string-literal \`code\`, a message that names
the field or operation and what was expected, an optional \`cause\`, and \`retryable\`. Check for one with
\`MinaraError.isInstance(e)\`, which works across duplicate copies of the package (it looks for a
\`Symbol.for('@minara/agent.error')\` marker instead of the prototype chain).

\`\`\`ts
import { createToolRegistry, MinaraError } from '@minara/agent';

try {
  createToolRegistry({ hooks: [{ before: 'nope' } as never] });
} catch (e) {
  if (MinaraError.isInstance(e)) console.error(e.code, e.message); // CONFIG_INVALID …
}
\`\`\`

Tool failures are not thrown at the model: \`registry.dispatch\` returns them as an envelope
\`{"ok":false,"error":"…","code":"…","retryable":false}\` with one of the codes below, and the audit log
records the same code.

## Subclasses with extra fields

| class | code(s) | extra fields |
| --- | --- | --- |
| \`ConfigError\` | \`CONFIG_INVALID\` | \`fields\`: the bad option paths |
| \`ToolCallBlockedError\` | \`TOOL_BLOCKED\` and the other block codes | \`toolName\` |
| \`ToolNotFoundError\` | \`TOOL_NOT_FOUND\` | \`toolName\`, \`suggestions\` |
| \`ToolInputError\` | \`TOOL_INPUT_INVALID\` | \`toolName\`, \`issues: { path, message }[]\` |
| \`SandboxEscapeError\` | \`SANDBOX_ESCAPE\` | \`path\` |
| \`ApprovalError\` | \`APPROVAL_*\` | \`approvalId\` |
| \`StorageError\` | \`STORAGE_ERROR\`, \`STORAGE_BUSY\`, \`STORAGE_UNAVAILABLE\`, \`MIGRATION_FAILED\` | \`operation\` |
| \`SkillDefinitionError\` | \`SKILL_INVALID\` | \`skillId\`, \`issues\` (field, message, severity) |
| \`SkillNotFoundError\` | \`SKILL_NOT_FOUND\` | \`skillIds\`, \`suggestions\` |
| \`SkillActivationRefusedError\` | \`SKILL_ACTIVATION_REFUSED\` | \`skillIds\` |
| \`WorkspaceConflictError\` | \`WORKSPACE_CONFLICT\` | \`fileName\`, \`expectedSha256\`, \`actualSha256\` |

## Codes

This table is generated from \`src/errors/codes.ts\` by \`npm run docs:errors\`; a test fails when a code is missing here.

| code | meaning |
| --- | --- |
${rows}
`;

writeFileSync(new URL('../docs/errors.md', import.meta.url), page);
console.log(`docs/errors.md: ${Object.keys(ERROR_CODES).length} codes`);
