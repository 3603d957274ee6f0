import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, DefaultChatTransport, type UIMessage } from 'ai';

/**
 * The framework-free core of `useChat` (`AbstractChat`) with a plain in-memory state: exactly the client
 * logic React's `useChat` runs, so these tests speak to the gateway the way a browser app does.
 */
export class TestChat extends AbstractChat<UIMessage> {
  constructor(init: { api: string; headers?: Record<string, string>; id?: string; messages?: UIMessage[] } & Omit<ChatInit<UIMessage>, 'transport' | 'messages' | 'id'>) {
    const { api, headers, messages: initial, ...rest } = init;
    const messages: UIMessage[] = initial ?? [];
    const state: ChatState<UIMessage> = {
      status: 'ready' as ChatStatus,
      error: undefined,
      messages,
      pushMessage: (m) => {
        state.messages = [...state.messages, m];
      },
      popMessage: () => {
        state.messages = state.messages.slice(0, -1);
      },
      replaceMessage: (i, m) => {
        state.messages = state.messages.map((old, j) => (j === i ? m : old));
      },
      snapshot: (thing) => structuredClone(thing),
    };
    // The harness's gateway trusts a proxy's headers: this client is a person, who may answer approvals.
    super({ ...rest, transport: new DefaultChatTransport({ api, headers: { 'x-minara-scopes': 'approvals:decide', ...headers } }), state });
  }
}
