export * from './markov';
export * from './shapley';
