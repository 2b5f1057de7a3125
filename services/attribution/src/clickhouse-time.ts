// ClickHouse renders DateTime64(3, 'UTC') as `YYYY-MM-DD hh:mm:ss.mmm`; the API speaks ISO 8601.
export function isoFromClickHouse(value: string): string {
  return `${value.replace(' ', 'T')}Z`;
}

export function isoOrNull(value: string | null | undefined): string | null {
  return value ? isoFromClickHouse(value) : null;
}
