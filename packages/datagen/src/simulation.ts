// The visitor simulation. People are created on their first day with their whole visit schedule
// planned up front (from a per-person generator, so a person's story does not depend on anyone
// else's); each day's sessions then play out in time order. Only people with visits still ahead
// are held in memory, so memory stays flat however long the window or large the event count.
import {
  CUSTOM_EVENTS, OUTBOUND_LINKS, PRODUCTS,
  type BrowserDef, type CampaignDef, type ChannelDef, type ConversionName, type CrmStage, type DeviceType, type PageDef,
  type ProductDef, type SourceDef,
} from './model';
import { campaignKey, campaignTables, DAY, HOUR, MINUTE, SECOND, type Context, type CountryInfo } from './context';
import { importedContact, importedContactCount, makePerson, type Person } from './people';
import { hash32, hashString, Rng, WeightedTable } from './random';
import type {
  CollectEvent, CollectEventType, CrmMilestone, EventsBatch, InboundEvent, OrderLine, PropValue, Refund, StoreOrder,
  WorkspaceRecord, WorkspaceSummary,
} from './types';

/** Chance that a first visit leads to a signup, before the channel's lift. */
const BASE_SIGNUP_RATE = 0.028;
const MAX_EVENTS_PER_REQUEST = 200;
const MAX_EVENTS_PER_PAGE = 20;

const GOAL_SIGNUP = 1;
const GOAL_DEMO = 2;
const GOAL_PURCHASE = 4;
const GOAL_LOGIN = 8;

const PERSON_SALT = hashString('person');
const VISITOR_SALT = hashString('visitor');
const OFFLINE_SALT = hashString('offline');

interface Device { aid: string; ua: string; screen: string; used: boolean; identified: boolean }
interface SessionPlan { ts: number; device: number; channel: ChannelDef; goals: number }
interface Visitor {
  index: number;
  rng: Rng;
  ip: string;
  devices: Device[];
  sessions: SessionPlan[];
  /** Converters who were already in the CRM before they came to the site. */
  importedIndex: number | null;
  person: Person | null;
}
type Action = 'login' | 'signup' | 'demo' | 'checkout';
interface Step { path: string; action: Action | null }
interface Extra { at: number; type: CollectEventType; name: string; props: Record<string, PropValue> }
/** Shared by every event without properties; frozen so no consumer can change them all at once. */
const NO_PROPS: Record<string, PropValue> = Object.freeze({}) as Record<string, PropValue>;
const COMPANY_SIZES = ['1-10', '11-50', '51-200', '201-1000', '1000+'];
interface Scheduled { visitor: Visitor; session: number; ts: number }
interface ServerEventItem { kind: 'server'; ts: number; event: InboundEvent }
type Pending = WorkspaceRecord | ServerEventItem;

const EVENT_TYPES: readonly CollectEventType[] = ['pageview', 'outbound', 'form_submit', 'custom', 'identify'];

export function emptySummary(): WorkspaceSummary {
  return {
    people: 0, anonymousIds: 0, sessions: 0, collectBatches: 0, collectEvents: 0,
    collectEventsByType: Object.fromEntries(EVENT_TYPES.map((t) => [t, 0])) as Record<CollectEventType, number>,
    eventsBatches: 0, serverEvents: 0, conversions: { signup: 0, demo_request: 0, purchase: 0 },
    serverEventsWithoutIdentity: 0, orders: 0, refunds: 0, milestones: 0, adSpendRows: 0, importedContacts: 0,
  };
}

export class Simulation {
  /** Counters for what has been yielded so far; complete once run() is exhausted. */
  readonly stats: WorkspaceSummary = emptySummary();
  private readonly sessionsByDay = new Map<number, Scheduled[]>();
  private readonly pendingByHour = new Map<number, Pending[]>();
  private campaignsToday = new Map<string, WeightedTable<CampaignDef>>();
  private readonly products: WeightedTable<ProductDef>;
  private readonly contactCount: number;
  private readonly pageUrls: Map<string, string>;
  private readonly productByPath: Map<string, ProductDef>;
  private orderSeq = 0;
  private dealSeq = 0;

  constructor(private readonly ctx: Context) {
    // Cheaper products sell more often.
    this.products = new WeightedTable(PRODUCTS.map((p) => [p, 1 / Math.sqrt(p.price)] as const));
    this.contactCount = importedContactCount(ctx.opts.visitors);
    this.pageUrls = new Map(ctx.site.pages.map((p) => [p.path, ctx.site.origin + p.path]));
    this.productByPath = new Map(PRODUCTS.map((p) => [`/product/${p.slug}`, p]));
  }

  *run(): Generator<WorkspaceRecord> {
    const { opts } = this.ctx;
    let nextIndex = 0;
    for (let day = 0; day < opts.days; day++) {
      const dayStart = opts.start + day * DAY;
      this.campaignsToday = campaignTables(this.ctx, day);
      const newToday = this.ctx.newPerDay[day] ?? 0;
      for (let k = 0; k < newToday; k++) this.createVisitor(nextIndex++, dayStart);
      const todays = this.sessionsByDay.get(day) ?? [];
      this.sessionsByDay.delete(day);
      todays.sort((a, b) => a.ts - b.ts);
      this.offlineConversions(day, dayStart);
      // Hour by hour: once every session that starts before an hour's end has played, nothing
      // more can land in that hour, so it is final. Short-lived buffers keep garbage collection cheap.
      let next = 0;
      for (let h = 0; h < 24; h++) {
        const hourEnd = dayStart + (h + 1) * HOUR;
        while (next < todays.length && todays[next]!.ts < hourEnd) this.playSession(todays[next++]!);
        yield* this.flushHour(day * 24 + h);
      }
    }
  }

  // ---------- people and schedules ----------

  private createVisitor(index: number, dayStart: number): void {
    const { ctx } = this;
    const rng = new Rng(hash32(ctx.opts.seed, VISITOR_SALT, index));
    const country = ctx.countries.pick(rng);
    const ip = randomIp(country, rng);
    const firstChannel = ctx.firstChannel.pick(rng);
    const converter = rng.chance(BASE_SIGNUP_RATE * firstChannel.conversionLift);
    const firstType = ctx.deviceTypes.pick(rng);
    const devices = [this.makeDevice(rng, firstType)];
    if (rng.chance(converter ? 0.3 : 0.1)) devices.push(this.makeDevice(rng, secondDeviceType(firstType, rng)));
    const importedIndex = converter && rng.chance(0.1) ? rng.int(this.contactCount) : null;

    const sessions: SessionPlan[] = [{ ts: dayStart + this.timeOfDay(rng, country), device: 0, channel: firstChannel, goals: 0 }];
    const addSession = (goals: number, device?: number): void => {
      const prev = sessions[sessions.length - 1]!;
      const chosen = device ?? (devices.length > 1 && rng.chance(0.45) ? 1 : 0);
      sessions.push({ ts: this.nextVisitTime(prev.ts, rng, country), device: chosen, channel: ctx.returnChannel.pick(rng), goals });
    };
    const browsing = converter ? rng.geometric(1.5) : rng.chance(0.3) ? 1 + rng.geometric(0.8) : 0;
    for (let i = 0; i < browsing; i++) addSession(0);
    if (converter) {
      const signup = sessions[sessions.length - 1]!;
      signup.goals |= GOAL_SIGNUP;
      if (rng.chance(0.3)) {
        if (rng.chance(0.5)) signup.goals |= GOAL_DEMO;
        else addSession(GOAL_DEMO | GOAL_LOGIN);
      }
      if (rng.chance(0.35)) {
        if (rng.chance(0.4)) signup.goals |= GOAL_PURCHASE;
        else addSession(GOAL_PURCHASE | GOAL_LOGIN);
      }
      const later = rng.geometric(1.2);
      for (let i = 0; i < later; i++) addSession(GOAL_LOGIN);
      // People with a second device log in on it too; that is what stitches the two ids.
      const signupAt = sessions.indexOf(signup);
      if (devices.length > 1 && !sessions.slice(signupAt + 1).some((s) => s.device === 1)) addSession(GOAL_LOGIN, 1);
    }

    const visitor: Visitor = { index, rng, ip, devices, sessions, importedIndex, person: null };
    this.stats.people++;
    sessions.forEach((plan, i) => {
      if (plan.ts < ctx.opts.end) this.bucket(this.sessionsByDay, Math.floor((plan.ts - ctx.opts.start) / DAY), { visitor, session: i, ts: plan.ts });
    });
  }

  private makeDevice(rng: Rng, type: DeviceType): Device {
    const browser: BrowserDef = this.ctx.browsers.get(type)!.pick(rng);
    return { aid: rng.uuid(), ua: rng.pick(browser.userAgents), screen: rng.pick(browser.screens), used: false, identified: false };
  }

  /** Milliseconds after UTC midnight, drawn in the visitor's local daytime and wrapped into the same UTC day. */
  private timeOfDay(rng: Rng, country: CountryInfo): number {
    const local = this.ctx.hours.pick(rng) * HOUR + rng.int(HOUR);
    return (((local - country.def.utcOffset * HOUR) % DAY) + DAY) % DAY;
  }

  private nextVisitTime(prev: number, rng: Rng, country: CountryInfo): number {
    const gapDays = Math.min(40, Math.floor(rng.lognormal(1.6, 1.1)));
    if (gapDays === 0) return prev + HOUR + rng.int(6 * HOUR);
    const start = this.ctx.opts.start;
    const prevDay = start + Math.floor((prev - start) / DAY) * DAY;
    return prevDay + gapDays * DAY + this.timeOfDay(rng, country);
  }

  private personOf(v: Visitor): Person {
    if (!v.person) {
      if (v.importedIndex !== null) {
        const c = importedContact(this.ctx.opts, v.importedIndex);
        v.person = { firstName: c.first_name, lastName: c.last_name, email: c.email, company: c.company };
      } else {
        v.person = makePerson(new Rng(hash32(this.ctx.opts.seed, PERSON_SALT, v.index)), 'v', v.index);
      }
    }
    return v.person;
  }

  // ---------- sessions ----------

  private playSession(s: Scheduled): void {
    const { ctx } = this;
    const v = s.visitor;
    const plan = v.sessions[s.session]!;
    const rng = v.rng;
    const device = v.devices[plan.device]!;
    this.stats.sessions++;
    if (!device.used) {
      device.used = true;
      this.stats.anonymousIds++;
    }
    const source = ctx.sources.get(plan.channel.key)!.pick(rng);
    const query = this.campaignQuery(source, rng);
    const steps = this.pathFor(plan, rng);
    const origin = ctx.site.origin;

    let t = plan.ts;
    let referrer: string | null = source.referrer;
    for (let si = 0; si < steps.length; si++) {
      const { path: step, action } = steps[si]!;
      const page = ctx.site.byPath.get(step)!;
      const plain = this.pageUrls.get(step)!;
      const url = si === 0 && query ? `${plain}?${query}` : plain;
      const events: CollectEvent[] = [this.event(rng, 'pageview', null, t, url, referrer, page.title, device.screen, NO_PROPS)];
      const dwell = Math.round(Math.min(7 * MINUTE, Math.max(4 * SECOND, action ? rng.lognormal(55 * SECOND, 0.5) : rng.lognormal(28 * SECOND, 1.0))));
      const leave = t + dwell;
      let endSession = false;

      // Background interactions, in time order inside the page.
      let extras: Extra[] | null = null;
      const customs = CUSTOM_EVENTS[page.section];
      if (customs) {
        for (const [name, p] of customs) {
          if (name !== 'add_to_cart' && rng.chance(p)) (extras ??= []).push({ at: t + 1 + rng.int(dwell - 400), type: 'custom', name, props: NO_PROPS });
        }
      }
      const links = plan.goals === 0 ? OUTBOUND_LINKS[page.section] : undefined;
      if (links) {
        for (const [href, p] of links) {
          if (rng.chance(p)) {
            (extras ??= []).push({ at: leave - 1, type: 'outbound', name: href, props: { href } });
            endSession = true;
            break;
          }
        }
      }
      if (page.section === 'product' && step !== '/shop' && (plan.goals & GOAL_PURCHASE || rng.chance(0.09))) {
        const product = this.productByPath.get(step);
        if (product) (extras ??= []).push({ at: t + Math.floor(dwell * 0.7), type: 'custom', name: 'add_to_cart', props: { sku: product.sku, price: product.price } });
      }
      if (extras) {
        extras.sort((a, b) => a.at - b.at);
        for (const x of extras) events.push(this.event(rng, x.type, x.name, x.at, url, referrer, page.title, device.screen, x.props));
      }

      // Forms close the page: submit, then the tracker's identify call.
      const submitAt = leave - 200;
      const form = (name: string, formId: string): void => {
        events.push(this.event(rng, 'form_submit', name, submitAt, url, referrer, page.title, device.screen, { form_id: formId }));
      };
      const identify = (method: string): void => {
        const e = this.event(rng, 'identify', null, submitAt + 40, url, referrer, page.title, device.screen, { method });
        e.email = this.personOf(v).email;
        events.push(e);
        device.identified = true;
      };
      if (action === 'login') {
        events.push(this.event(rng, 'custom', 'login', submitAt, url, referrer, page.title, device.screen, NO_PROPS));
        identify('login');
      } else if (action === 'signup') {
        form('signup', 'signup-form');
        identify('signup');
        this.conversion(v, device, 'signup', submitAt + 500 + rng.int(4000), rng, {});
      } else if (action === 'demo') {
        form('demo_request', 'demo-form');
        if (!device.identified) identify('demo_form');
        this.conversion(v, device, 'demo_request', submitAt + 500 + rng.int(4000), rng, { company_size: rng.pick(COMPANY_SIZES) });
      } else if (action === 'checkout') {
        form('checkout', 'checkout-form');
        if (!device.identified) identify('checkout');
        this.purchase(v, device, submitAt + 800 + rng.int(5000), rng, steps);
      } else if (page.section === 'blog' && plan.goals === 0 && !endSession && rng.chance(0.012)) {
        form('newsletter', 'newsletter');
        identify('newsletter');
      }

      for (let i = 0; i < events.length; i += MAX_EVENTS_PER_PAGE) {
        const chunk = events.length <= MAX_EVENTS_PER_PAGE ? events : events.slice(i, i + MAX_EVENTS_PER_PAGE);
        const last = chunk[chunk.length - 1]!;
        this.push({ kind: 'collect', ts: last.ts, userAgent: device.ua, ip: v.ip, origin, body: { site: ctx.opts.siteId, aid: device.aid, events: chunk } });
      }
      if (endSession) break;
      referrer = url;
      t = leave + 300 + rng.int(1200);
    }
  }

  private event(rng: Rng, type: CollectEventType, name: string | null, ts: number, url: string, referrer: string | null, title: string, screen: string, props: Record<string, PropValue>): CollectEvent {
    return { id: rng.uuid(), type, name, ts, url, referrer, title, screen, props };
  }

  /** Pages of one session: a landing page, some browsing, then the scripted steps of its goals. */
  private pathFor(plan: SessionPlan, rng: Rng): Step[] {
    const { ctx } = this;
    const path: Step[] = [];
    const visit = (p: string, action: Action | null = null): void => {
      path.push({ path: p, action });
    };
    const landing = this.resolvePath(ctx.landings.get(plan.channel.key)!.pick(rng), rng);
    visit(landing);
    let browse: number;
    if (plan.goals === 0) browse = rng.chance(0.42) ? 0 : Math.min(11, 1 + rng.geometric(2));
    else browse = rng.int(3);
    let current = landing;
    for (let i = 0; i < browse; i++) {
      const section = ctx.site.byPath.get(current)!.section;
      let next = this.resolvePath(ctx.nextPage.get(section)!.pick(rng), rng);
      if (next === current) next = '/';
      visit(next);
      current = next;
    }
    // Landing on a form page without the goal is an abandoned visit: a page view and nothing more.
    if (plan.goals & GOAL_LOGIN) {
      visit('/login', 'login');
      visit('/app/dashboard');
    }
    if (plan.goals & GOAL_SIGNUP) {
      if (!path.some((s) => s.path === '/pricing') && rng.chance(0.6)) visit('/pricing');
      visit('/signup', 'signup');
      visit('/signup/welcome');
    }
    if (plan.goals & GOAL_DEMO) {
      visit('/demo', 'demo');
      visit('/demo/thanks');
    }
    if (plan.goals & GOAL_PURCHASE) {
      visit(ctx.site.byPath.get(current)?.section === 'product' && current !== '/shop' ? current : rng.pick(ctx.site.productPaths));
      if (rng.chance(0.3)) visit(rng.pick(ctx.site.productPaths));
      visit('/cart');
      visit('/checkout', 'checkout');
      visit('/checkout/thank-you');
    }
    return path;
  }

  private resolvePath(pattern: string, rng: Rng): string {
    if (!pattern.endsWith('/*')) return pattern;
    const prefix = pattern.slice(0, -1);
    const site = this.ctx.site;
    if (prefix === '/blog/') return rng.pick(site.blogPaths);
    if (prefix === '/product/') return rng.pick(site.productPaths);
    const matches = site.pages.filter((p: PageDef) => p.path.startsWith(prefix));
    return matches.length > 0 ? rng.pick(matches).path : '/';
  }

  /** UTM tags and click id for the landing URL; empty for untagged traffic. */
  private campaignQuery(source: SourceDef, rng: Rng): string {
    if (!source.utmSource) return '';
    const params: string[] = [`utm_source=${encodeURIComponent(source.utmSource)}`];
    if (source.utmMedium) params.push(`utm_medium=${source.utmMedium}`);
    if (source.platform && source.campaignKind) {
      const campaign = this.campaignsToday.get(campaignKey(source.platform, source.campaignKind))!.pick(rng);
      const adSet = rng.pick(campaign.adSets);
      const ad = rng.pick(adSet.ads);
      params.push(`utm_campaign=${campaign.slug}`, `utm_content=${ad.slug}`);
      if (adSet.keywords) params.push(`utm_term=${encodeURIComponent(rng.pick(adSet.keywords))}`);
      params.push(`utm_id=${campaign.id}`);
    } else if (source.ownedCampaigns) {
      params.push(`utm_campaign=${rng.pick(source.ownedCampaigns)}`);
    }
    if (source.clickId) params.push(`${source.clickId}=${clickIdValue(source.clickId, rng)}`);
    return params.join('&');
  }

  // ---------- conversions, orders, milestones ----------

  /** Server-side conversion: mostly email + anonymous id, some email only, a few with no identity. */
  private conversion(v: Visitor, device: Device, name: ConversionName, ts: number, rng: Rng, properties: Record<string, PropValue>, revenue?: number): void {
    const event: InboundEvent = { event_type: 'conversion', event_name: name, occurred_at: new Date(ts).toISOString() };
    const r = rng.float();
    if (r < 0.95) event.email = this.personOf(v).email;
    if (r < 0.8) event.anonymous_id = device.aid;
    if (revenue !== undefined) {
      event.revenue = revenue;
      event.currency = this.ctx.opts.currency;
    }
    event.properties = properties;
    this.push({ kind: 'server', ts, event });
    if (name === 'signup') this.signupMilestones(this.personOf(v).email, ts, rng);
    if (name === 'demo_request') this.demoMilestones(this.personOf(v).email, ts, rng);
  }

  private purchase(v: Visitor, device: Device, ts: number, rng: Rng, steps: readonly Step[]): void {
    const viewed = PRODUCTS.filter((p) => steps.some((s) => s.path === `/product/${p.slug}`));
    const order = this.makeOrder(rng, ts, this.personOf(v).email, 'web', viewed);
    this.conversion(v, device, 'purchase', ts, rng, { order_id: order.order_id, items: order.lines.length }, order.total);
  }

  private makeOrder(rng: Rng, ts: number, email: string, channel: 'web' | 'offline', viewed: readonly ProductDef[]): StoreOrder {
    const picked: ProductDef[] = [...viewed];
    if (picked.length === 0) picked.push(this.products.pick(rng));
    const lineCount = Math.min(PRODUCTS.length, Math.max(picked.length, 1 + rng.geometric(0.4)));
    while (picked.length < lineCount) {
      const p = this.products.pick(rng);
      if (!picked.includes(p)) picked.push(p);
    }
    const lines: OrderLine[] = picked.map((p) => ({
      sku: p.sku, name: p.name, quantity: rng.chance(0.85) ? 1 : rng.between(2, 3), unit_price: p.price, unit_cost: p.cost,
    }));
    const total = round2(lines.reduce((sum, l) => sum + l.quantity * l.unit_price, 0));
    this.orderSeq++;
    const orderId = `SO-${100000 + this.orderSeq}`;
    const refunds: Refund[] = [];
    if (rng.chance(0.07)) {
      const at = ts + Math.floor(rng.lognormal(5 * DAY, 0.7));
      const full = rng.chance(0.6);
      const line = lines[rng.int(lines.length)]!;
      if (at < this.ctx.opts.end) {
        refunds.push({
          refund_id: `RF-${100000 + this.orderSeq}`,
          refunded_at: new Date(at).toISOString(),
          amount: full ? total : round2(line.unit_price),
          reason: rng.pick(['customer_request', 'damaged', 'duplicate', 'not_as_described']),
        });
      }
    }
    const order: StoreOrder = { order_id: orderId, ordered_at: new Date(ts).toISOString(), customer_email: email, currency: this.ctx.opts.currency, lines, total, refunds, channel };
    this.push({ kind: 'order', ts, order });
    return order;
  }

  private milestone(email: string, stage: CrmStage, ts: number, deal?: { id: string; amount: number }): void {
    const m: CrmMilestone = { email, stage, occurred_at: new Date(ts).toISOString() };
    if (deal) {
      m.deal_id = deal.id;
      m.amount = deal.amount;
      m.currency = this.ctx.opts.currency;
    }
    this.push({ kind: 'milestone', ts, milestone: m });
  }

  private signupMilestones(email: string, ts: number, rng: Rng): void {
    this.milestone(email, 'lead', ts + MINUTE + rng.int(10 * MINUTE));
    if (rng.chance(0.35)) this.milestone(email, 'mql', ts + DAY + rng.int(4 * DAY));
    if (rng.chance(0.5)) {
      const trial = ts + 2 * MINUTE;
      this.milestone(email, 'trial_started', trial);
      if (rng.chance(0.3)) {
        const converted = trial + 12 * DAY + rng.int(4 * DAY);
        const amount = rng.pick([49, 99, 299]);
        this.milestone(email, 'trial_converted', converted);
        this.milestone(email, 'subscription_started', converted + MINUTE, { id: `SUB-${hash32(this.ctx.opts.seed, ts).toString(36)}`, amount });
        if (rng.chance(0.1)) this.milestone(email, 'subscription_churned', converted + 30 * DAY + rng.int(60 * DAY));
      }
    }
  }

  private demoMilestones(email: string, ts: number, rng: Rng): void {
    if (!rng.chance(0.6)) return;
    const sql = ts + DAY + rng.int(2 * DAY);
    this.milestone(email, 'sql', sql);
    const created = sql + rng.int(2 * DAY);
    const deal = { id: `DEAL-${1000 + ++this.dealSeq}`, amount: Math.round(rng.lognormal(6000, 0.8) / 100) * 100 };
    this.milestone(email, 'deal_created', created, deal);
    const r = rng.float();
    if (r < 0.3) this.milestone(email, 'deal_won', created + 10 * DAY + rng.int(35 * DAY), deal);
    else if (r < 0.65) this.milestone(email, 'deal_lost', created + 7 * DAY + rng.int(33 * DAY), deal);
  }

  /** Phone and in-person sales to already-known contacts: conversions with an email and no journey. */
  private offlineConversions(day: number, dayStart: number): void {
    const { opts } = this.ctx;
    const rng = new Rng(hash32(opts.seed, OFFLINE_SALT, day));
    const count = rng.poisson((opts.visitors / opts.days) * 0.0015);
    const known = Math.max(1, Math.round(this.contactCount * 0.6));
    for (let i = 0; i < count; i++) {
      const ts = dayStart + 8 * HOUR + rng.int(10 * HOUR);
      const email = importedContact(opts, rng.int(known)).email;
      const order = this.makeOrder(rng, ts, email, 'offline', []);
      const event: InboundEvent = {
        event_type: 'conversion', event_name: 'purchase', occurred_at: new Date(ts + 30 * SECOND).toISOString(), email,
        revenue: order.total, currency: opts.currency, properties: { order_id: order.order_id, items: order.lines.length, sales_channel: rng.pick(['phone', 'in_store']) },
      };
      this.push({ kind: 'server', ts: ts + 30 * SECOND, event });
    }
  }

  // ---------- ordering ----------

  private bucket<T extends { ts: number }>(map: Map<number, T[]>, key: number, item: T): void {
    const list = map.get(key);
    if (list) list.push(item);
    else map.set(key, [item]);
  }

  /** Anything at or after the window's end has not happened yet, so it is dropped. */
  private push(item: Pending): void {
    if (item.ts < this.ctx.opts.end) this.bucket(this.pendingByHour, Math.floor((item.ts - this.ctx.opts.start) / HOUR), item);
  }

  private *flushHour(hour: number): Generator<WorkspaceRecord> {
    const items = this.pendingByHour.get(hour) ?? [];
    this.pendingByHour.delete(hour);
    const out: WorkspaceRecord[] = [];
    const server: ServerEventItem[] = [];
    for (const item of items) {
      if (item.kind === 'server') server.push(item);
      else out.push(item);
    }
    server.sort((a, b) => a.ts - b.ts);
    // A backend flushes its queue at least hourly and never sends more than the API allows per request.
    for (let i = 0; i < server.length; i += MAX_EVENTS_PER_REQUEST) {
      const chunk = server.slice(i, i + MAX_EVENTS_PER_REQUEST);
      out.push({ kind: 'events', ts: chunk[chunk.length - 1]!.ts, body: { events: chunk.map((s) => s.event) } } satisfies EventsBatch);
    }
    out.sort((a, b) => a.ts - b.ts);
    for (const record of out) {
      this.count(record);
      yield record;
    }
  }

  private count(record: WorkspaceRecord): void {
    const st = this.stats;
    switch (record.kind) {
      case 'collect':
        st.collectBatches++;
        st.collectEvents += record.body.events.length;
        for (const e of record.body.events) st.collectEventsByType[e.type]++;
        break;
      case 'events':
        st.eventsBatches++;
        st.serverEvents += record.body.events.length;
        for (const e of record.body.events) {
          if (e.event_name === 'signup' || e.event_name === 'demo_request' || e.event_name === 'purchase') st.conversions[e.event_name]++;
          if (!e.email && !e.anonymous_id && !e.phone) st.serverEventsWithoutIdentity++;
        }
        break;
      case 'order':
        st.orders++;
        st.refunds += record.order.refunds.length;
        break;
      case 'milestone':
        st.milestones++;
        break;
    }
  }
}

function secondDeviceType(first: DeviceType, rng: Rng): DeviceType {
  if (first === 'desktop') return rng.chance(0.85) ? 'mobile' : 'tablet';
  return rng.chance(0.8) ? 'desktop' : first === 'mobile' ? 'tablet' : 'mobile';
}

function randomIp(country: CountryInfo, rng: Rng): string {
  const range = rng.pick(country.ranges);
  const n = (range.base + rng.int(range.size)) >>> 0;
  const last = n & 255;
  // Skip .0 and .255 so no address looks like a network or broadcast address.
  const fixed = last === 0 || last === 255 ? rng.between(1, 254) : last;
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${fixed}`;
}

function clickIdValue(param: string, rng: Rng): string {
  switch (param) {
    case 'gclid': return `EAIaIQobChMI${rng.token(44)}_BwE`;
    case 'msclkid': return rng.uuid().replace(/-/g, '');
    case 'fbclid': return `IwAR${rng.token(58)}`;
    case 'li_fat_id': return rng.uuid();
    default: return `E.C.P.${rng.token(40)}`;
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
