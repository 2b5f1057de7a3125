// The contacts module: the conversion ledger (one row per conversion) with its outcome fields,
// value history and computed attribution fields, in its own Postgres schema `contacts`. It answers
// GET/PATCH /contacts (and the /conversions aliases), and announces every outcome change through
// a transactional outbox: conversion.value_changed (which attribution will consume to restate
// revenue), stage.changed, conversion.updated, and outcome.writeback_requested for crm-sync.
// CRM lifecycle stages (milestone.reached from crm-sync) are written to the ledger the same way.
import { join } from 'node:path';
import { createOutbox, defineModule, type Outbox, type OutboxOptions, type RunnableModule } from '@sightline/kit';
import { ContactsRepo } from './contacts.repo';
import { contactsRpcHandlers } from './contacts.rpc';
import { contactsConsumers } from './contacts.consumers';

export interface ContactsModuleOptions {
  outbox?: OutboxOptions;
}

export function createContactsModule(options: ContactsModuleOptions = {}): RunnableModule {
  return defineModule({
    name: 'contacts',
    needs: { postgres: { schema: 'contacts', migrationsDir: join(__dirname, '..', 'migrations', 'postgres') } },
    async create(ctx) {
      const sql = ctx.postgres;
      const repo = new ContactsRepo(sql);
      const outbox: Outbox<'contacts'> = createOutbox(sql, ctx.bus, ctx.logger, options.outbox);
      return {
        rpc: contactsRpcHandlers({ sql, repo, outbox, cursorSecret: ctx.settings.cursorSecret }),
        consumers: contactsConsumers(repo, sql, outbox),
        schedules: [{ name: 'contacts-idempotency-expiry', cron: '17 * * * *', run: () => repo.deleteExpiredReplies() }],
        adminRoutes(router) {
          // Operators see (and may hold) the outbox: e.g. to drain a broker without losing changes.
          router.get('/contacts/outbox', (_req, res, next) => {
            outbox.pendingCount().then((pending) => res.json({ pending, paused: outbox.isPaused() }), next);
          });
          router.post('/contacts/outbox/pause', (_req, res) => {
            outbox.pause();
            res.json({ paused: true });
          });
          router.post('/contacts/outbox/resume', (_req, res) => {
            outbox.resume();
            res.json({ paused: false });
          });
        },
        async start() {
          outbox.start();
        },
        async stop() {
          await outbox.stop();
        },
      };
    },
  });
}

export { ContactsRepo } from './contacts.repo';
export { PII_NOTE } from './contacts.rpc';
export { resolveWindow, CONTACTS_MAX_WINDOW_DAYS, type ContactsWindow } from './window';
