export { createOutbox, type Outbox, type OutboxMessage, type OutboxOptions, type OutboxPublisher } from './outbox';
export { OUTBOX_MIGRATION_SQL } from './outbox.sql';
