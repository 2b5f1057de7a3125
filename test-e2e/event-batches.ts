// The event stream the crash and replica tests send through the gateway: numbered batches of
// custom events (every 50th a conversion) from a few visitors, each batch posted until it is
// acknowledged, as a client does, with the same Idempotency-Key every time.

/** Batch `n`: `size` events one second apart ending now, from `visitors` visitors of that batch. */
export function eventBatch(n: number, size: number, visitors: number): Record<string, unknown>[] {
  return Array.from({ length: size }, (_, i) => ({
    event_type: i % 50 === 0 ? 'conversion' : 'custom',
    event_name: `e${i}`,
    anonymous_id: `visitor-${n}-${i % visitors}`,
    occurred_at: new Date(Date.now() - (size - i) * 1000).toISOString(),
  }));
}

/** POSTs the events until the answer is 200; resolves with how many were accepted and how many attempts failed. */
export async function postUntilAccepted(baseUrl: string, key: string, idempotencyKey: string, events: Record<string, unknown>[]): Promise<{ accepted: number; retries: number }> {
  for (let retries = 0; ; retries += 1) {
    const response = await fetch(`${baseUrl}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ events }),
    }).catch(() => null);
    if (response?.status === 200) return { accepted: ((await response.json()) as { accepted: number }).accepted, retries };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
