import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { useEffect, useRef, useState } from 'react';
import type { MinaraUIMessage } from '@minara/agent';
import { api, ApiError, apiUrl, authHeaders, type ServerInfo } from './api';

type Part = MinaraUIMessage['parts'][number];
type ToolPart = Extract<Part, { type: `tool-${string}` }>;
const isToolPart = (p: Part): p is ToolPart => p.type.startsWith('tool-');

const compact = (value: unknown, max = 160) => {
  const text = JSON.stringify(value) ?? '';
  return text.length > max ? `${text.slice(0, max)}…` : text;
};

function ToolCard({ part, onAnswer }: { part: ToolPart; onAnswer: (id: string, approved: boolean) => void }) {
  const name = part.type.replace(/^tool-/, '');
  const output = part.state === 'output-available' ? part.output : undefined;
  return (
    <div className={`tool tool-${part.state}`} data-testid="tool-card">
      <div className="tool-head">
        <code>{name}</code> <span className="state">{part.state}</span>
      </div>
      <div className="tool-input">{compact(part.input)}</div>
      {part.state === 'approval-requested' ? (
        <div className="approval">
          <p>{part.approval.requestReason ?? 'This call needs your approval.'}</p>
          <button onClick={() => onAnswer(part.approval.id, true)}>Approve</button>
          <button className="secondary" onClick={() => onAnswer(part.approval.id, false)}>
            Deny
          </button>
        </div>
      ) : null}
      {part.state === 'output-denied' ? <div className="denied">Denied: nothing ran.</div> : null}
      {output ? <div className={output.ok ? 'result ok' : 'result err'}>{output.ok ? compact(output.data) : `${output.code ?? 'error'}: ${output.error}`}</div> : null}
    </div>
  );
}

/** Artifact URIs in an answer (`chart://x-…`, `report://r-…`, `spreadsheet://x-…`). */
const ARTIFACT_URI = /\b(?:chart|report|spreadsheet):\/\/([xr]-[a-z0-9]{6,64})(?![a-z0-9])/g;

/**
 * One artifact inline: its viewer (GET /v1/artifacts/:id/view through a signed link) in a sandboxed frame
 * (scripts only, an opaque origin: it cannot read this page or its token).
 */
function ArtifactFrame({ id }: { id: string }) {
  const [src, setSrc] = useState<string | undefined>();
  const [failed, setFailed] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    // The JSON answer carries a short-lived signed view link: a frame cannot send the token itself.
    api<{ artifact: { viewUrl?: string } }>(`v1/artifacts/${encodeURIComponent(id)}`).then(
      (r) => live && (r.artifact.viewUrl ? setSrc(apiUrl(r.artifact.viewUrl)) : setFailed('no view link')),
      (e: unknown) => live && setFailed(e instanceof Error ? e.message : 'error'),
    );
    return () => {
      live = false;
    };
  }, [id]);
  if (failed) return <div className="muted">Artifact {id} is not available ({failed}).</div>;
  if (!src) return <div className="muted">Loading {id}…</div>;
  return <iframe className="artifact" data-testid="artifact-frame" data-artifact={id} title={`artifact ${id}`} sandbox="allow-scripts" src={src} />;
}

function Conversation({ chatId, initial }: { chatId: string; initial: MinaraUIMessage[] }) {
  const [input, setInput] = useState('');
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat<MinaraUIMessage>({
    id: chatId,
    messages: initial,
    // A reload mid-answer picks the running turn up again (GET /v1/chat/:id/stream).
    resume: true,
    transport: new DefaultChatTransport({ api: apiUrl('v1/chat'), headers: () => authHeaders() }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // Block body: scrollIntoView returns a promise in current browsers, and an effect may only return a cleanup.
    void end.current?.scrollIntoView({ block: 'end' });
  }, [messages]);
  const busy = status === 'submitted' || status === 'streaming';
  return (
    <>
      <div className="messages" data-testid="messages">
        {messages.map((m) => (
          <div key={m.id} className={`message ${m.role}`} data-role={m.role}>
            {m.parts.map((p, i) =>
              p.type === 'text' ? (
                <div key={i}>
                  <p className="text">{p.text}</p>
                  {m.role === 'assistant' ? [...new Set([...p.text.matchAll(ARTIFACT_URI)].map((x) => x[1]!))].map((id) => <ArtifactFrame key={id} id={id} />) : null}
                </div>
              ) : isToolPart(p) ? (
                <ToolCard key={p.toolCallId} part={p} onAnswer={(id, approved) => void addToolApprovalResponse({ id, approved })} />
              ) : null,
            )}
          </div>
        ))}
        {error ? <div className="error">{error.message}</div> : null}
        <div ref={end} />
      </div>
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault();
          if (!input.trim() || busy) return;
          void sendMessage({ text: input });
          setInput('');
        }}
      >
        <input aria-label="message" placeholder="Ask about prices, your portfolio, or place a paper trade…" value={input} onChange={(e) => setInput(e.target.value)} />
        <button type="submit" disabled={busy}>
          {busy ? '…' : 'Send'}
        </button>
      </form>
    </>
  );
}

export function ChatPage({ chatId }: { chatId: string }) {
  const [initial, setInitial] = useState<MinaraUIMessage[] | undefined>();
  const [info, setInfo] = useState<ServerInfo | undefined>();
  useEffect(() => {
    api<ServerInfo>('v1/info').then(setInfo, () => setInfo(undefined));
    api<{ messages: MinaraUIMessage[] }>(`v1/chat/${encodeURIComponent(chatId)}`).then(
      (r) => setInitial(r.messages),
      (e: unknown) => setInitial(e instanceof ApiError && e.status === 404 ? [] : []),
    );
  }, [chatId]);
  return (
    <section className="chat">
      {info && !info.model.configured ? (
        <div className="panel warn" data-testid="no-model">
          <h2>No language model is configured</h2>
          <p>{info.model.reason}</p>
          <p>
            Set <code>MINARA_MODEL=provider:model</code> and the provider's key (e.g. <code>ANTHROPIC_API_KEY</code>), then restart <code>minara serve</code>. Memory, workspace and approvals work meanwhile.
          </p>
        </div>
      ) : null}
      {initial ? <Conversation chatId={chatId} initial={initial} /> : <p className="muted">Loading…</p>}
    </section>
  );
}
