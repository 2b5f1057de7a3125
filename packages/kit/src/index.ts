export * from './bus/types';
export { createBus, partitionOf, DEFAULT_PARTITIONS, type PartitionSettings } from './bus';
export { coalesce, groupToken, type CoalesceOptions } from './bus/coalesce';
export { StoreUnavailableError, isStoreOutage } from './bus/store-outage';
export { serviceBus, type PublishInputOf, type ServiceBus } from './bus/service-bus';
export * from './stores/types';
export { createStoreProvider } from './stores';
export { runClickHouseMigrations, runSqlMigrations } from './stores/migrations';
export * from './errors';
export * from './module';
export { loadConfig, isEmbedded, sectionOf, ConfigError, type ConfigSection, type ConfigVariable, type SightlineConfig } from './config';
export { createLogger, type Logger } from './logger';
export { startModules, type RunningProcess, type StartOptions } from './runner';
export { renderProblem, sendProblem, PROBLEM_TITLES, type ProblemDocument, type RenderedProblem } from './http/problem';
export { requestIdMiddleware, requestIdOf, REQUEST_ID_HEADER } from './http/request-id';
export { adminRoute, type AdminReply } from './http/admin';
export {
  addInputFormats,
  DATE_TIME_RULE,
  findInputFault,
  isStorableEpochMs,
  MAX_JSON_DEPTH,
  MAX_JSON_VALUES,
  parseStorableTime,
  STORABLE_TIME_MAX_MS,
  STORABLE_TIME_MIN_MS,
  STORABLE_TIME_RANGE,
  textFault,
  WINDOW_TIME_MIN_MS,
  type InputFault,
} from './http/input';
export { CursorCodec, invalidCursor } from './cursor';
export { createQueueWorker, type QueueWorker, type QueueWorkerOptions } from './queue-worker';
export { SealError, sealingBox, type SealingBox, type SealingPurpose } from './sealing';
export { createOutbox, OUTBOX_MIGRATION_SQL, type Outbox, type OutboxMessage, type OutboxOptions, type OutboxPublisher } from './outbox';
export * from './api';
export * from './telemetry';
export { busAdminRoutes, redriveReport, MAX_REDRIVE_PER_REQUEST, type RedriveReport } from './bus-admin';
