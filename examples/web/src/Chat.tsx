import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { useEffect, useRef, useState } from 'react';
import type { MinaraUIMessage } from '@minara/agent';
import { api, apiUrl, authHeaders, type ServerInfo } from './api';
import { describeOrder } from './format';
import { Markdown } from './Markdown';
import { ApprovalBlock, RawJson, ResultBody, resultHeadline } from './ToolCards';

type Part = MinaraUIMessage['parts'][number];
type ToolPart = Extract<Part, { type: `tool-${string}` }>;
const isToolPart = (p: Part): p is ToolPart => p.type.startsWith('tool-');

/** The state of a tool call, as a person reads it. */
const STATE_LABEL: Readonly<Record<string, string>> = {
  'input-streaming': 'preparing',
  'input-available': 'running',
  'approval-requested': 'waiting for your approval',
  'approval-responded': 'answered',
  'output-available': 'done',
  'output-error': 'failed',
  'output-denied': 'denied',
};

const TOOL_TITLE: Readonly<Record<string, string>> = {
  get_price: 'Price',
  get_portfolio: 'Portfolio',
  minara_pnl: 'P&L',
  minara_total_balance: 'Balance',
  buy_token: 'Buy',
  sell_token: 'Sell',
  swap_tokens: 'Swap',
  open_perps_position: 'Open perp',
  close_perps_position: 'Close perp',
  transfer_token: 'Transfer',
  withdraw_funds: 'Withdraw',
};

function ToolCard({ part, onAnswer }: { part: ToolPart; onAnswer: (id: string, approved: boolean) => void }) {
  const name = part.type.replace(/^tool-/, '');
  const output = part.state === 'output-available' ? part.output : undefined;
  const ok = output?.ok === true ? output : undefined;
  const failed = output && output.ok === false ? output : undefined;
  // A price or a portfolio card says it all; a preview, a fill or another result gets its sentence on top.
  const headline = ok ? (name === 'get_price' || name === 'get_portfolio' ? undefined : resultHeadline(name, ok.data, part.input)) : part.state === 'approval-requested' ? undefined : describeOrder({ toolName: name, input: part.input });
  return (
    <section className={`tool tool-${part.state}`} data-testid="tool-card" data-tool={name} data-state={part.state} aria-label={`${TOOL_TITLE[name] ?? name}: ${STATE_LABEL[part.state] ?? part.state}`}>
      <div className="tool-head">
        <strong>{TOOL_TITLE[name] ?? name}</strong> <code className="muted">{name}</code> <span className={`state state-${part.state}`}>{STATE_LABEL[part.state] ?? part.state}</span>
      </div>
      {headline ? <p className="headline">{headline}</p> : null}
      {part.state === 'approval-requested' ? (
        <ApprovalBlock approvalId={part.approval.id} toolName={name} input={part.input} reason={part.approval.requestReason} onAnswer={(approved) => onAnswer(part.approval.id, approved)} />
      ) : null}
      {part.state === 'output-denied' ? <div className="denied">Denied: nothing ran.</div> : null}
      {ok ? <ResultBody toolName={name} data={ok.data} input={part.input} /> : null}
      {failed ? <div className="result err">{`${failed.code ?? 'error'}: ${failed.error}`}</div> : null}
      {part.state === 'output-error' ? <div className="result err">{part.errorText}</div> : null}
      <RawJson value={output !== undefined ? { input: part.input, output } : { input: part.input }} />
    </section>
  );
}

/** What the `clarify` tool returned: a question the person answers by picking a choice (or typing). */
interface Clarification {
  readonly kind: 'clarification';
  readonly question: string;
  readonly choices: ReadonlyArray<{ readonly label: string; readonly value: string }>;
  readonly allowFreeText: boolean;
}

function clarificationOf(part: ToolPart): Clarification | undefined {
  if (part.type !== 'tool-clarify' || part.state !== 'output-available') return undefined;
  const data = (part.output as { ok?: boolean; data?: unknown } | undefined)?.data as Partial<Clarification> | undefined;
  return data?.kind === 'clarification' && typeof data.question === 'string' && Array.isArray(data.choices) ? (data as Clarification) : undefined;
}

/** The agent's question with its choices as buttons; picking one sends it as the person's answer. */
function ClarifyCard({ question, onPick, disabled }: { question: Clarification; onPick: (text: string) => void; disabled: boolean }) {
  return (
    <div className="card clarify" role="group" aria-label="The agent asks" data-testid="clarify">
      <p className="card-body">{question.question}</p>
      <div className="choices">
        {question.choices.map((c) => (
          <button key={c.value} type="button" disabled={disabled} onClick={() => onPick(c.value)}>
            {c.label}
          </button>
        ))}
      </div>
      {question.allowFreeText ? <p className="muted">Or type your own answer below.</p> : null}
    </div>
  );
}

/** Artifact URIs in an answer (`chart://x-…`, `report://r-…`, `spreadsheet://x-…`). */
const ARTIFACT_URI = /\b(?:chart|report|spreadsheet):\/\/([xr]-[a-z0-9]{6,64})(?![a-z0-9])/g;

/**
 * One artifact inline: its viewer (GET /v1/artifacts/:id/view through a signed link) in a sandboxed frame
 * (scripts only, an opaque origin: it cannot read this page or its token).
 */
export function ArtifactFrame({ id }: { id: string }) {
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

/** A gateway error body (`{"error":{"code":"HTTP_…","message":"…"}}`), when the failure is one. */
function gatewayRefusal(message: string): { code: string; message: string } | undefined {
  try {
    const body = JSON.parse(message) as { error?: { code?: unknown; message?: unknown } };
    const { code, message: text } = body.error ?? {};
    return typeof code === 'string' && code.startsWith('HTTP_') && typeof text === 'string' ? { code, message: text } : undefined;
  } catch {
    return undefined;
  }
}

/** What a failed answer means for a person, and what to check, from the error's code and message. */
export function explainModelError(message: string): { title: string; checks: string[] } {
  // The gateway's own refusal (`{"error":{"code":"HTTP_…","message":"…"}}`): its message is what the person needs.
  const refusal = gatewayRefusal(message);
  if (refusal) return { title: refusal.code === 'HTTP_FORBIDDEN' ? 'This browser may not do that here' : 'The server refused this request', checks: [refusal.message] };
  const text = message.toLowerCase();
  if (/econnrefused|cannot connect|fetch failed|enotfound|eai_again|socket hang up|network/.test(text)) {
    const at = /(\d{1,3}(?:\.\d{1,3}){3}:\d+|localhost:\d+|[a-z0-9.-]+\.[a-z]{2,}(?::\d+)?)/i.exec(message)?.[1];
    return {
      title: 'The model could not be reached',
      checks: [
        `Is the model server running${at ? ` at ${at}` : ''}? (Ollama, LM Studio or vLLM must be started before you chat.)`,
        'Is MINARA_MODEL_BASE_URL (or the provider) the address you meant?',
        'Is this machine online, and not blocked by a proxy or firewall?',
      ],
    };
  }
  if (/\b(401|403)\b|api key|unauthori[sz]ed|forbidden|invalid.*key/.test(text)) {
    return { title: 'The model provider refused the key', checks: ['Is the provider key (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY) set and current?', 'Does the key have access to this model?'] };
  }
  if (/\b429\b|rate limit|quota|overloaded|\b529\b/.test(text)) {
    return { title: 'The model provider is busy or the quota is used up', checks: ['Wait a moment and retry.', "Check the plan and the usage limits on the provider's side."] };
  }
  if (/model.*not found|\b404\b|unknown model|does not exist/.test(text)) {
    return { title: 'The model was not found', checks: ['Is the model name in MINARA_MODEL spelled as the provider names it?', 'For a local server: is the model pulled/loaded?'] };
  }
  return { title: 'The model failed to answer', checks: ['Retry; if it fails again, the details below say what the provider answered.'] };
}

/** A failed answer: what failed, what to check, Retry; the raw error only behind "Details". */
function ModelErrorPanel({ message, onRetry, busy }: { message: string; onRetry: () => void; busy: boolean }) {
  const { title, checks } = explainModelError(message);
  return (
    <div className="panel warn model-error" role="alert" data-testid="model-error">
      <h2>{title}</h2>
      <p>Nothing was done for this message. Check:</p>
      <ul>
        {checks.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
      <div className="actions">
        <button type="button" onClick={onRetry} disabled={busy} data-testid="model-retry">
          Retry
        </button>
      </div>
      <details className="raw">
        <summary>Details</summary>
        <pre>{message}</pre>
      </details>
    </div>
  );
}

/** A message with nothing to show (an answer that failed before its first word): no empty bubble. */
const hasVisiblePart = (m: MinaraUIMessage) => m.parts.some((p) => (p.type === 'text' ? p.text.trim() !== '' : isToolPart(p)));

function Conversation({ chatId, initial }: { chatId: string; initial: MinaraUIMessage[] }) {
  const [input, setInput] = useState('');
  const { messages, sendMessage, status, error, addToolApprovalResponse, regenerate, clearError } = useChat<MinaraUIMessage>({
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
      <div className="messages" data-testid="messages" role="log" aria-label="conversation" aria-live="polite">
        {messages.length === 0 ? (
          <div className="empty" data-testid="chat-empty">
            <p>Ask for a price (“What's ETH at?”), your portfolio, or a paper trade (“Buy $50 of ETH”).</p>
            <p className="muted">Trades always show what will happen and wait for your approval.</p>
          </div>
        ) : null}
        {messages.filter((m) => m.role !== 'assistant' || hasVisiblePart(m)).map((m) => (
          <div key={m.id} className={`message ${m.role}`} data-role={m.role}>
            {m.parts.map((p, i) =>
              p.type === 'text' ? (
                <div key={i}>
                  {m.role === 'assistant' ? <Markdown text={p.text} /> : <p className="text">{p.text}</p>}
                  {m.role === 'assistant' ? [...new Set([...p.text.matchAll(ARTIFACT_URI)].map((x) => x[1]!))].map((id) => <ArtifactFrame key={id} id={id} />) : null}
                </div>
              ) : isToolPart(p) && clarificationOf(p) ? (
                <ClarifyCard key={p.toolCallId} question={clarificationOf(p)!} disabled={busy || m.id !== messages.at(-1)?.id} onPick={(text) => void sendMessage({ text })} />
              ) : isToolPart(p) ? (
                <ToolCard key={p.toolCallId} part={p} onAnswer={(id, approved) => void addToolApprovalResponse({ id, approved })} />
              ) : p.type === 'data-minara-input-flagged' && p.data.source ? (
                <div key={i} className="flagged" role="note" data-testid="input-flagged">
                  ⚠ The agent read text that looks like an instruction, from <strong>{p.data.source}</strong>. It is not followed; anything it leads to still needs your approval.
                  <blockquote>{p.data.excerpt}</blockquote>
                </div>
              ) : null,
            )}
          </div>
        ))}
        {error ? (
          <ModelErrorPanel
            message={error.message}
            busy={busy}
            onRetry={() => {
              clearError();
              void regenerate();
            }}
          />
        ) : null}
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
        <input aria-label="message" placeholder="Ask about prices, your portfolio, or place a paper trade…" value={input} onChange={(e) => setInput(e.target.value)} autoFocus />
        <button type="submit" disabled={busy} aria-busy={busy}>
          Send
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
      // A new chat answers with no messages; if the server cannot be reached the chat still starts empty.
      () => setInitial([]),
    );
  }, [chatId]);
  return (
    <section className="chat" aria-labelledby="chat-title">
      <h1 id="chat-title" className="visually-hidden">
        Chat
      </h1>
      {info && !info.model.configured ? (
        <div className="panel warn" data-testid="no-model">
          <h2>No language model is configured</h2>
          <p>{info.model.reason}</p>
          <p>
            Set <code>MINARA_MODEL=provider:model</code> and the provider's key (e.g. <code>ANTHROPIC_API_KEY</code>), then restart <code>minara serve</code>. Memory, workspace and approvals work meanwhile.
          </p>
        </div>
      ) : null}
      {info && info.identity?.canDecide === false ? (
        <div className="panel warn" data-testid="cannot-decide" role="status">
          <p>
            This browser can chat but cannot approve trades or withdrawals. Open the one-time link <code>minara serve</code> printed in its terminal (or start it with <code>--open</code>).
          </p>
        </div>
      ) : null}
      {initial ? <Conversation chatId={chatId} initial={initial} /> : <p className="muted">Loading…</p>}
    </section>
  );
}
