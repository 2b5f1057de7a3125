// What a language model writes a message from: the alert's data as one JSON object (figures
// formatted as the template shows them), and the figures it must state. Names and titles come from
// recorded data that whoever sends an event or edits a CRM record controls, so they travel as JSON
// values inside the data, never as prompt text.
import type { View } from './compose';

export interface Facts {
  data: Record<string, unknown>;
  /** Every value of the data as text: the numbers a message may state are the numbers in here. */
  text: string;
  /** The figures the message must state verbatim. */
  required: string[];
}

export function factsOf(view: View): Facts {
  const data: Record<string, unknown> = { alert: view.alert.name, website: view.website.domain, timezone: view.website.timezone };
  if (view.test) data['test_message'] = true;
  if (view.condition) data['condition'] = { state: view.condition.holds ? 'alert' : 'back to normal', text: view.condition.text };
  if (view.event) {
    data['event'] = {
      title: view.event.title, details: view.event.details, happened: view.event.when, ...(view.event.sample ? { sample: true } : {}),
    };
  }
  if (view.count > 0) {
    data['events'] = { count: view.count, period: view.period, listed: view.events.map((e) => ({ title: e.title, happened: e.when })), ...(view.more > 0 ? { not_listed: view.more } : {}) };
  }
  const required: string[] = [];
  if (view.figure_list.length > 0) {
    data['figures'] = view.figure_list.map((f) => ({
      label: f.label, window: f.window, value: f.value,
      ...(f.previous !== null ? { previous_period: { window: f.previous_window, value: f.previous } } : {}),
      ...(f.change ? { change: f.change } : {}),
    }));
    required.push(...view.figure_list.map((f) => f.value));
  }
  if (view.event?.amount) required.push(view.event.amount);
  return { data, text: leaves(data).join('\n'), required };
}

function leaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(leaves);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(leaves);
  return [];
}
