// The bounded renderer: the same output as Mustache for the templates alerts use, a write-time
// nesting limit, and a run-time budget that stops the 3^depth expansion of nested sections.
import Mustache from 'mustache';
import { MAX_OUTPUT_CHARS, MAX_SECTION_DEPTH, render, sectionDepth, TemplateTooLargeError } from './render';

/** The reviewer's probe: sections of one name nested `depth` deep. */
const nestedProbe = (depth: number, name = 'a'): string => `${`{{#${name}}}`.repeat(depth)}x${`{{/${name}}}`.repeat(depth)}`;

describe('render', () => {
  const view = {
    alert: { name: 'Sales <b>' }, website: { domain: 'shop.test' }, count: 2, one: false, none: [], zero: 0, flag: true,
    events: [{ title: 'A & B', when: 'Mon' }, { title: 'C', when: 'Tue' }],
    figure_list: [{ label: 'revenue', value: '€1.00', previous: '€2.00', change: null }, { label: 'visitors', value: '3', previous: null }],
    event: { details: ['plan: pro', 'origin: api'], title: 'T' },
  };
  const templates = [
    '{{alert.name}} on {{website.domain}}: {{count}} {{#one}}event{{/one}}{{^one}}events{{/one}}\n{{#events}}• {{title}} ({{when}})\n{{/events}}',
    '{{#figure_list}}{{label}}: {{value}}{{#previous}} (previous {{previous}}{{#change}}, {{change}}{{/change}}){{/previous}}\n{{/figure_list}}',
    '{{#event.details}}{{.}};{{/event.details}}{{^none}}empty{{/none}}{{#zero}}no{{/zero}}{{#flag}}yes {{alert.name}}{{/flag}}{{{alert.name}}}{{! a comment }}{{> partial}}',
    '{{=<% %>=}}<% alert.name %> <%#events%><%title%><%/events%>',
    '{{missing}}{{missing.deeper}}{{#missing}}never{{/missing}}{{alert.missing}}',
  ];

  it('renders what Mustache renders, with the escape of each target', () => {
    const slack = (v: unknown) => String(v).replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c] ?? c);
    for (const template of templates) {
      expect(render(template, view, 'text')).toBe(Mustache.render(template, view, {}, { escape: (v: unknown) => String(v) }));
      expect(render(template, view, 'slack')).toBe(Mustache.render(template, view, {}, { escape: slack }));
    }
  });

  it('reads data only: no prototype member and no function is reached', () => {
    const withFn = { ...view, fn: () => 'ran' };
    expect(render('[{{constructor}}][{{toString}}][{{alert.constructor}}][{{fn}}][{{#fn}}x{{/fn}}][{{events.length}}]', withFn, 'text')).toBe('[][][][][][2]');
  });

  it('measures section nesting without recursion, deep templates included', () => {
    expect(sectionDepth('{{a}} {{#b}}{{/b}}')).toBe(1);
    expect(sectionDepth('{{#a}}{{^b}}{{#c}}{{/c}}{{/b}}{{/a}}{{#d}}{{/d}}')).toBe(3);
    expect(sectionDepth(nestedProbe(MAX_SECTION_DEPTH))).toBe(MAX_SECTION_DEPTH);
    expect(sectionDepth(nestedProbe(330))).toBe(330); // about the deepest 4,000 characters allow
  });

  it('stops the nested-section probe over a 3-item list at its budget, quickly, instead of expanding 3^depth', () => {
    const started = Date.now();
    // 3^11 = 177,147 copies (3^20 would never finish): the step budget stops both.
    for (const depth of [11, 20]) expect(() => render(nestedProbe(depth), { a: [1, 2, 3] }, 'text')).toThrow(TemplateTooLargeError);
    // Sections that write nothing still cost steps.
    expect(() => render(`${'{{#a}}'.repeat(20)}${'{{/a}}'.repeat(20)}`, { a: [1, 2, 3] }, 'text')).toThrow(/repeats its sections more than/);
    expect(Date.now() - started).toBeLessThan(2_000);
    // At the limit of nesting over a list of 3, a template renders.
    expect(render(nestedProbe(MAX_SECTION_DEPTH), { a: [1, 2, 3] }, 'text')).toBe('x'.repeat(3 ** MAX_SECTION_DEPTH));
  });

  it('stops once the output passes 64 KiB, and renders up to it', () => {
    const line = 'y'.repeat(1023);
    expect(render('{{#rows}}{{.}}\n{{/rows}}', { rows: Array(64).fill(line) }, 'text')).toHaveLength(MAX_OUTPUT_CHARS);
    expect(() => render('{{#rows}}{{.}}\n{{/rows}}', { rows: Array(65).fill(line) }, 'text')).toThrow(/longer than 65,536 characters/);
  });
});
