export { createFileStore, describeBytes, FILE_KEY } from './file-store';
export { attachmentKeyOf, createMessageTranslator, FILE_REF_PREFIX, type MessageTranslator, type MessageTranslatorOptions } from './message-translator';
export { sniffContentType, type SniffResult } from './sniff';
export { type ParsedSheet, type ParsedSpreadsheet, parseSpreadsheet, type ParseSpreadsheetOptions, SPREADSHEET_TYPES } from './spreadsheet-parser';
export { DEFAULT_MAX_FILE_BYTES, type FileStore, type FileStoreOptions, type PutFileInput, type StoredFile } from './types';
