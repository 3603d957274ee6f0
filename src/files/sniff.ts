/** What the bytes of an upload are, by content, not by what the uploader said. */
export interface SniffResult {
  /** The type used from here on: sniffed from magic bytes; for text, the declared or extension type when it is a text type. */
  readonly mediaType: string;
  /** The file extension used in the key. */
  readonly ext: string;
  /** How it was decided. */
  readonly by: 'magic' | 'text' | 'unknown';
}

const TEXT_TYPES: Readonly<Record<string, string>> = { 'text/csv': 'csv', 'text/plain': 'txt', 'text/markdown': 'md', 'application/json': 'json', 'text/tab-separated-values': 'tsv' };
const TEXT_EXT: Readonly<Record<string, string>> = { csv: 'text/csv', txt: 'text/plain', md: 'text/markdown', json: 'application/json', tsv: 'text/tab-separated-values' };

let fileType: Promise<typeof import('file-type')> | undefined;

/** Strict UTF-8 without NUL bytes (a binary file is never called text). Looks at the first 64 KiB. */
function looksLikeText(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 65_536);
  if (head.includes(0)) return false;
  try {
    // A multi-byte character cut at the 64 KiB boundary is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(head.length < bytes.length ? head.subarray(0, Math.max(0, head.length - 4)) : head);
    return true;
  } catch {
    return false;
  }
}

/**
 * Decide an upload's content type from its bytes (`file-type`'s magic numbers). A declared type never wins
 * over the bytes: a PDF declared `image/png` is a PDF, an HTML page declared `image/png` is `text/plain`.
 * Text formats without magic numbers (CSV, JSON, markdown) take the declared or the extension's text type;
 * other text is `text/plain` (never `text/html` or SVG, which a browser would run); unknown binary is
 * `application/octet-stream`.
 */
export async function sniffContentType(bytes: Uint8Array, hints: { readonly declared?: string | undefined; readonly filename?: string | undefined } = {}): Promise<SniffResult> {
  fileType ??= import('file-type');
  const { fileTypeFromBuffer } = await fileType;
  const found = await fileTypeFromBuffer(bytes);
  if (found && found.mime !== 'application/xml' && !found.mime.includes('svg') && !found.mime.includes('html')) return { mediaType: found.mime, ext: found.ext, by: 'magic' };
  if (looksLikeText(bytes)) {
    const declared = hints.declared?.split(';')[0]?.trim().toLowerCase();
    if (declared && TEXT_TYPES[declared]) return { mediaType: declared, ext: TEXT_TYPES[declared], by: 'text' };
    const ext = /\.([a-z0-9]{1,8})$/i.exec(hints.filename ?? '')?.[1]?.toLowerCase();
    if (ext && TEXT_EXT[ext]) return { mediaType: TEXT_EXT[ext], ext, by: 'text' };
    return { mediaType: 'text/plain', ext: 'txt', by: 'text' };
  }
  return { mediaType: 'application/octet-stream', ext: 'bin', by: 'unknown' };
}
