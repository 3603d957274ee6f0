export {
  bucketCount, DEFAULT_DOCTOR_FIXES, DOCTOR_FIXES, type DoctorCount, type DoctorFixName, type DoctorFixOptions, type DoctorFixReport, type DoctorFixResult,
  type DoctorOptions, type DoctorReport, formatDoctorFixReport, type SnapshotDirtyCounters, formatDoctorReport, runDoctor, runDoctorFixes,
} from './doctor';
export { exportMemory, type ExportMemoryOptions, type ExportMemoryResult, memoryFileName } from './memory-export';
export { formatImportReport, importMemory, type ImportFileResult, type ImportMemoryOptions, type ImportMemoryResult } from './memory-import';
export { MEMORY_EXPORT_SCHEMA_VERSION, VOLATILE_FIELDS } from './export-format';
export type { LoosePath } from '../util/private-fs';
