// @sightline/periods: the analytics window (`period`, `from`, `to`) resolved in the website timezone.
export { resolveWindow, TO_ONLY_SPAN_DAYS, type ResolvedWindow, type ResolveWindowInput } from './resolve-window';
export { ACCEPTED_FORMS } from './errors';
export { previousWindow, shiftWindowDays, type WindowBounds } from './shift-window';
