// The ProviderError a connector call rejects with (anything else fails the test as itself).
import { ProviderError } from '../src/connectors/connector';

export async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error('expected a ProviderError');
}
