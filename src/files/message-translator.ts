import type { FilePart, ImagePart, ModelMessage, TextPart } from 'ai';
import { MinaraError } from '../errors/minara-error';
import { createConsoleLogger, type Logger } from '../util/logger';
import { parseSpreadsheet, SPREADSHEET_TYPES } from './spreadsheet-parser';
import type { FileStore, StoredFile } from './types';

/** The `data` of a stored attachment part: `minara-file:<key>` (a reference, never the bytes). */
export const FILE_REF_PREFIX = 'minara-file:';

/** Images the providers take inline. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** Documents the providers take as file parts. */
const DOCUMENT_TYPES = new Set(['application/pdf']);
const TEXT_TYPES = new Set(['text/plain', 'text/markdown', 'application/json']);

/** Options of {@link createMessageTranslator}. */
export interface MessageTranslatorOptions {
  readonly files: FileStore;
  /** Rows of an uploaded spreadsheet shown to the model per sheet. @default 200 */
  readonly spreadsheetRows?: number | undefined;
  /** Most characters of a text upload shown to the model. @default 100000 */
  readonly maxTextChars?: number | undefined;
  /** Most attachments on one message. @default 10 */
  readonly maxAttachments?: number | undefined;
  /** @default a console logger at `warn` */
  readonly logger?: Logger | undefined;
}

/** Bridges attachment keys in stored messages and the provider's multimodal parts. */
export interface MessageTranslator {
  /** The user message to store: its text plus one reference part per key (`minara-file:<key>`); an unknown or another user's key is `NOT_FOUND`. */
  toStoredUserMessage(input: { readonly text: string; readonly attachments: readonly string[]; readonly userId: string }): Promise<ModelMessage>;
  /** Messages as the model receives them: reference parts become image, file or text parts (spreadsheets as structured text). */
  toModelMessages(messages: readonly ModelMessage[], scope: { readonly userId: string }): Promise<ModelMessage[]>;
}

/** The key of a stored reference part, or undefined. */
export function attachmentKeyOf(part: unknown): string | undefined {
  const p = part as { type?: unknown; data?: unknown } | null;
  return p && p.type === 'file' && typeof p.data === 'string' && p.data.startsWith(FILE_REF_PREFIX) ? p.data.slice(FILE_REF_PREFIX.length) : undefined;
}

/**
 * The message translator: on the way to storage an attachment key becomes a reference part (no binary in the
 * sessions table); on the way into the model a reference becomes the provider's part: an `image` part for PNG,
 * JPEG, GIF and WebP, a `file` part for PDF, structured text for CSV and XLSX (`parseSpreadsheet`, row-capped),
 * the text itself for plain text, and a one-line note for anything else. Parsed spreadsheets are cached by key.
 *
 * @example
 * ```ts
 * const translator = createMessageTranslator({ files });
 * const runtime = createAgentRuntime({ model, tools, messageTranslator: translator });
 * runtime.run({ sessionId: 's1', message: 'What is in this sheet?', attachments: [stored.key] });
 * ```
 */
export function createMessageTranslator(options: MessageTranslatorOptions): MessageTranslator {
  if (!options || typeof options.files?.stat !== 'function') throw new MinaraError('CONFIG_INVALID', 'createMessageTranslator: "files" must be a FileStore (createFileStore).');
  const { files, spreadsheetRows = 200, maxTextChars = 100_000, maxAttachments = 10, logger = createConsoleLogger({ level: 'warn' }) } = options;
  const parsed = new Map<string, string>();

  async function toPart(key: string, userId: string): Promise<TextPart | FilePart> {
    const stat = await files.stat({ userId }, key);
    if (!stat) return { type: 'text', text: `[Attachment ${key} is no longer available.]` };
    const label = `${stat.filename ?? key} (${stat.mediaType}, ${stat.sizeBytes} bytes)`;
    if (SPREADSHEET_TYPES.includes(stat.mediaType)) {
      let text = parsed.get(`${userId}\u0000${key}`);
      if (text === undefined) {
        try {
          const path = await files.pathOf({ userId }, key);
          text = (await parseSpreadsheet({ path, mediaType: stat.mediaType, filename: stat.filename ?? key, maxRows: spreadsheetRows })).text;
        } catch (error) {
          text = `[Attachment ${label} could not be read: ${error instanceof Error ? error.message : String(error)}]`;
          logger.warn('attachment unreadable', { key, error: error instanceof Error ? error.message : String(error) });
        }
        if (parsed.size > 100) parsed.delete(parsed.keys().next().value!);
        parsed.set(`${userId}\u0000${key}`, text);
      }
      return { type: 'text', text: `[Attachment ${label}]\n${text}` };
    }
    if (IMAGE_TYPES.has(stat.mediaType) || DOCUMENT_TYPES.has(stat.mediaType)) {
      const read = await files.read({ userId }, key);
      if (!read) return { type: 'text', text: `[Attachment ${key} is no longer available.]` };
      // Images too as a `file` part with their image/* type: AI SDK 7 deprecates the `image` part (it warns on every
      // call that carries one) and turns it into this same part before the provider sees it.
      return { type: 'file', data: read.bytes, mediaType: stat.mediaType, ...(stat.filename ? { filename: stat.filename } : {}) };
    }
    if (TEXT_TYPES.has(stat.mediaType)) {
      const read = await files.read({ userId }, key);
      const text = read ? new TextDecoder().decode(read.bytes) : '';
      return { type: 'text', text: `[Attachment ${label}]\n${text.length > maxTextChars ? `${text.slice(0, maxTextChars)}\n[Truncated at ${maxTextChars} characters.]` : text}` };
    }
    return { type: 'text', text: `[Attachment ${label}: this type cannot be shown to the model.]` };
  }

  return {
    async toStoredUserMessage({ text, attachments, userId }) {
      if (!Array.isArray(attachments)) throw new MinaraError('INVALID_ARGUMENT', 'attachments: expected an array of file keys.');
      if (attachments.length > maxAttachments) throw new MinaraError('INVALID_ARGUMENT', `attachments: at most ${maxAttachments} per message, got ${attachments.length}.`);
      const refs: FilePart[] = [];
      for (const [i, key] of attachments.entries()) {
        const stat: StoredFile | undefined = typeof key === 'string' ? await files.stat({ userId }, key) : undefined;
        if (!stat) throw new MinaraError('NOT_FOUND', `attachments[${i}]: no file ${JSON.stringify(String(key).slice(0, 80))}; upload it first (POST /v1/files or fileStore.put) and pass its key.`);
        refs.push({ type: 'file', data: `${FILE_REF_PREFIX}${stat.key}`, mediaType: stat.mediaType, ...(stat.filename ? { filename: stat.filename } : {}) });
      }
      return { role: 'user', content: [...(text !== '' ? [{ type: 'text' as const, text }] : []), ...refs] };
    },
    async toModelMessages(messages, { userId }) {
      const out: ModelMessage[] = [];
      for (const m of messages) {
        if (m.role !== 'user' || typeof m.content === 'string' || !m.content.some((p) => attachmentKeyOf(p) !== undefined)) {
          out.push(m);
          continue;
        }
        // Parts other than attachment keys pass through as the message had them (an image part a host built itself too).
        const content: Array<TextPart | ImagePart | FilePart> = [];
        for (const p of m.content) {
          const key = attachmentKeyOf(p);
          content.push(key === undefined ? p : await toPart(key, userId));
        }
        out.push({ ...m, content });
      }
      return out;
    },
  };
}
