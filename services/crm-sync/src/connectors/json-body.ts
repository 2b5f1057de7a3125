// Provider answers are read as text first (error messages quote it); this reads the JSON in it, if
// any. An empty or unparseable body is null: the caller then reports the status and the text.
export function parseJsonOrNull(text: string): unknown {
  try {
    return text === '' ? null : (JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}
