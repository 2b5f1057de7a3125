// Writing a message with a language model through an OpenAI-compatible chat-completions endpoint
// the operator configures. The model is given the facts as text and must state every gathered
// figure verbatim and no number that is not in the facts; a message that fails the check, or a
// model that fails to answer, falls back to the template and the run records why.

export interface AiSettings {
  /** Base URL of the OpenAI-compatible API, e.g. https://api.openai.com/v1 (POST <url>/chat/completions). */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

export type AiOutcome = { ok: true; text: string } | { ok: false; reason: string };

const SYSTEM_PROMPT = [
  'You write short alert messages for a marketing analytics product.',
  'Use only the facts you are given. Write every figure exactly as it is written in the facts, character for character (currency symbols and separators included).',
  'Do not calculate, round, convert or estimate anything, and write no number that is not in the facts.',
  'Plain text, at most four sentences, no greeting, no sign-off, no links.',
].join(' ');

/** Numbers as they appear in text: 1,234.50 12 -20.0 (a sign is not part of the token). */
const NUMBER_TOKEN = /\d+(?:[.,]\d+)*/g;

export function numberTokens(text: string): string[] {
  return text.match(NUMBER_TOKEN) ?? [];
}

/** Why the model's text cannot be sent, or null when it states the figures and invents nothing. */
export function checkAiText(text: string, facts: string, required: readonly string[]): string | null {
  const missing = required.find((figure) => !text.includes(figure));
  if (missing !== undefined) return `the model's message did not state the figure ${missing} verbatim`;
  const allowed = new Set(numberTokens(facts));
  const invented = numberTokens(text).find((token) => !allowed.has(token));
  if (invented !== undefined) return `the model's message states ${invented}, which is not among the gathered figures`;
  return null;
}

export async function composeWithAi(settings: AiSettings, facts: string, required: readonly string[]): Promise<AiOutcome> {
  let response: Response;
  try {
    response = await fetch(`${settings.url.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
      body: JSON.stringify({
        model: settings.model,
        temperature: 0,
        max_tokens: 400,
        messages: [
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: `Facts:\n${facts}\n\nWrite the alert message.` },
        ],
      }),
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    return { ok: false, reason: timedOut ? `the model did not answer within ${settings.timeoutMs} ms` : `the model endpoint could not be reached (${error instanceof Error ? error.message : String(error)})` };
  }
  const raw = await response.text();
  if (!response.ok) {
    let detail = raw.slice(0, 200);
    try {
      const parsed = JSON.parse(raw) as { error?: { message?: string } };
      if (parsed.error?.message) detail = parsed.error.message;
    } catch {
      // not JSON: keep the text
    }
    return { ok: false, reason: `the model endpoint answered ${response.status}: ${detail}` };
  }
  let content: unknown;
  try {
    content = (JSON.parse(raw) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    return { ok: false, reason: 'the model endpoint answered something that is not JSON' };
  }
  if (typeof content !== 'string' || content.trim() === '') return { ok: false, reason: 'the model answered no message' };
  const text = content.trim();
  const fault = checkAiText(text, facts, required);
  return fault === null ? { ok: true, text } : { ok: false, reason: fault };
}
