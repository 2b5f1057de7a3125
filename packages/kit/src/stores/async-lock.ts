// A FIFO mutex for a single connection shared by several logical stores (PGlite).

export class AsyncLock {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `fn` once every earlier holder has finished; holders never overlap. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    // The next holder waits for this one to settle, whatever the outcome.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
