export { createOutbox, type Outbox, type OutboxMessage, type OutboxOptions } from './outbox';
export { OUTBOX_MIGRATION_SQL } from './outbox.sql';
