// Starter templates (GET /automations meta.templates): the alerts people set up first. Each is a
// whole spec; creating from one takes the body's `deliver` in place of the placeholder recipients.
import type { AutomationSpec } from './spec';

export interface StarterTemplate {
  id: string;
  name: string;
  description: string;
  spec: AutomationSpec;
}

const EMAIL = [{ channel: 'email' as const, to: ['team@example.com'] }];
const CHAT = [{ channel: 'chat' as const, to: ['C0123456789'] }];

export const TEMPLATES: readonly StarterTemplate[] = [
  {
    id: 'conversion-to-chat',
    name: 'Every new conversion to chat',
    description: 'Posts each conversion as it is recorded, with its value and a link to the contact.',
    spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: CHAT, pacing: { mode: 'each' } },
  },
  {
    id: 'daily-digest',
    name: 'Daily digest by email',
    description: 'Every morning at 08:00: yesterday\'s visitors, conversions and revenue, each against the day before.',
    spec: {
      version: 1,
      trigger: { kind: 'schedule', cron: '0 8 * * *' },
      gather: {
        visitors: { metric: 'visitors', period: 'yesterday' },
        conversions: { metric: 'conversions', period: 'yesterday' },
        revenue: { metric: 'revenue', period: 'yesterday' },
      },
      deliver: EMAIL,
      pacing: { mode: 'each' },
    },
  },
  {
    id: 'conversions-down',
    name: 'Conversions down 20% against the previous week',
    description: 'Checks every hour; alerts when the last 7 days have 20% fewer conversions than the 7 days before, and says when it is back to normal.',
    spec: {
      version: 1,
      trigger: { kind: 'threshold', cron: '0 * * * *' },
      gather: { conversions: { metric: 'conversions', period: 'last 7 days' } },
      condition: { figure: 'conversions', compare: 'previous_period', change: 'percent', op: 'lte', value: -20 },
      deliver: EMAIL,
      pacing: { mode: 'each' },
    },
  },
  {
    id: 'revenue-down',
    name: 'Revenue down 20% against the previous week',
    description: 'Checks every hour; alerts when revenue of the last 7 days is 20% below the 7 days before, and says when it is back to normal.',
    spec: {
      version: 1,
      trigger: { kind: 'threshold', cron: '0 * * * *' },
      gather: { revenue: { metric: 'revenue', period: 'last 7 days' } },
      condition: { figure: 'revenue', compare: 'previous_period', change: 'percent', op: 'lte', value: -20 },
      deliver: EMAIL,
      pacing: { mode: 'each' },
    },
  },
  {
    id: 'funnel-conversion-drop',
    name: 'A funnel\'s conversion dropping',
    description: 'Checks every hour; alerts when the share of people completing a funnel over the last 7 days is 20% below the 7 days before. Send this spec with the id of your funnel (GET /funnels) in gather.conversion.funnel.',
    spec: {
      version: 1,
      trigger: { kind: 'threshold', cron: '0 * * * *' },
      gather: { conversion: { funnel: '00000000-0000-4000-8000-000000000000', period: 'last 7 days' } },
      condition: { figure: 'conversion', compare: 'previous_period', change: 'percent', op: 'lte', value: -20 },
      deliver: EMAIL,
      pacing: { mode: 'each' },
    },
  },
  {
    id: 'deal-won',
    name: 'A deal won',
    description: 'Posts when a CRM deal moves to a won stage, with its amount and a link to its journey.',
    spec: {
      version: 1,
      trigger: { kind: 'event', events: ['deal.stage_changed'] },
      filters: [{ field: 'bucket', op: 'eq', values: ['won'] }],
      deliver: CHAT,
      pacing: { mode: 'each' },
    },
  },
];

export const TEMPLATE_IDS = TEMPLATES.map((t) => t.id);
