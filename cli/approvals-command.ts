/**
 * `minara approvals`: list pending approvals, approve or deny one. An MCP host's call (source `mcp`) or a
 * session-less one is only decided (the host calls the tool again); a chat session's is decided and its
 * turn resumed, as the REPL and the gateway do.
 */
import type { CliOptions } from './app';
import { compactJson, truncate } from './render';

export interface ApprovalsCommandOptions {
  readonly reason?: string | undefined;
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
}

const USAGE = 'usage: minara approvals [list] | minara approvals approve <id> [--reason text] | minara approvals deny <id> [--reason text]';

export async function runApprovalsCommand(cli: CliOptions, positionals: readonly string[], options: ApprovalsCommandOptions = {}): Promise<number> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  const writeErr = options.writeErr ?? ((s: string) => process.stderr.write(s));
  const [verb = 'list', id, ...rest] = positionals;
  const listing = verb === 'list';
  if ((!listing && verb !== 'approve' && verb !== 'deny') || rest.length > 0 || (listing && id !== undefined) || (!listing && id === undefined)) {
    writeErr(`minara: ${USAGE}\n`);
    return 2;
  }
  if (listing && options.reason !== undefined) {
    writeErr('minara: --reason only applies to approve and deny\n');
    return 2;
  }
  const { buildApp } = await import('./app');
  const app = await buildApp(cli, { surface: 'cli', mcp: false });
  try {
    const { approvals } = app.tools;
    if (listing) {
      const pending = await approvals.list({ status: 'pending' });
      if (pending.length === 0) {
        write('No pending approvals.\n');
        return 0;
      }
      for (const a of pending) {
        write(`${a.id}  ${a.toolName} ${compactJson(JSON.parse(a.inputJson) as unknown, 80)}  from ${a.source}  session ${a.sessionId ?? '-'}  expires ${a.expiresAt}\n    ${truncate(a.reason, 120)}\n`);
      }
      write('Decide with: minara approvals approve <id>  |  minara approvals deny <id>\n');
      return 0;
    }
    const approvalId = id as string;
    const record = await approvals.get(approvalId);
    if (!record) {
      writeErr(`minara: no approval "${approvalId}"\n`);
      return 1;
    }
    if (record.status !== 'pending') {
      writeErr(`minara: approval ${approvalId} is already ${record.status}\n`);
      return 1;
    }
    const approved = verb === 'approve';
    const reason = options.reason ?? `minara approvals ${verb}`;
    if (record.sessionId === undefined || record.source === 'mcp') {
      await approvals.decide(approvalId, { approved, reason });
      write(`${approved ? 'Approved' : 'Denied'} ${record.toolName} (${approvalId}).${record.source === 'mcp' ? ' The MCP host runs it when it calls the tool again with the same arguments.' : ''}\n`);
      return 0;
    }
    const session = await app.storage.conversations.getSession(record.sessionId);
    write(`${approved ? 'Approving' : 'Denying'} ${record.toolName} (${approvalId}) and resuming session ${record.sessionId}…\n`);
    const result = await app.runtime.generate({
      sessionId: record.sessionId,
      approvals: [{ approvalId, approved, reason }],
      surface: 'cli',
      ...(session?.userId ? { userId: session.userId } : {}),
    });
    if (result.text) write(`${result.text}\n`);
    return 0;
  } finally {
    await app.close();
  }
}
