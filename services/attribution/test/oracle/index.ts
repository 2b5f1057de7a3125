// The attribution oracle: sessions, touches, journeys, the five models, paths and coverage
// recomputed in plain TypeScript from classified events, for the differential tests; CRM
// milestones credited the same way (milestones.ts).
export * from './types';
export * from './identity';
export * from './sessions';
export * from './models';
export * from './dataset';
export * from './metrics';
export * from './paths';
export * from './coverage';
export * from './data-driven';
export * from './milestones';
