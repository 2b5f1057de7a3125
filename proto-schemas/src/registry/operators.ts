// Filter operators: `filter=dimension:operator:value`. List operators take values separated by `|`
// (a value is free text and may itself contain commas).

export const OPERATOR_NAMES = ['eq', 'ne', 'in', 'nin', 'contains', 'not_contains'] as const;

export type OperatorName = (typeof OPERATOR_NAMES)[number];

export interface OperatorDefinition {
  name: OperatorName;
  description: string;
  /** True when the value is a list of alternatives separated by LIST_SEPARATOR. */
  list: boolean;
}

export const LIST_SEPARATOR = '|';

export const OPERATORS: readonly OperatorDefinition[] = [
  { name: 'eq', list: false, description: 'Equals the value exactly (case-sensitive).' },
  { name: 'ne', list: false, description: 'Differs from the value; rows where the dimension is empty are kept.' },
  { name: 'in', list: true, description: 'Equals any of the values, written `a|b|c`.' },
  { name: 'nin', list: true, description: 'Equals none of the values, written `a|b|c`; rows where the dimension is empty are kept.' },
  { name: 'contains', list: false, description: 'Contains the value as a substring, ignoring case.' },
  { name: 'not_contains', list: false, description: 'Does not contain the value as a substring, ignoring case; rows where the dimension is empty are kept.' },
];
