// The assistant's answer stream (spec 6.2): text/event-stream where each
// line is "data: " and one JSON event — {delta}, {done, tokens_in,
// tokens_out} or {error}. EventSource cannot POST, so the console reads
// the fetch body itself: chunks split lines (and UTF-8 sequences)
// anywhere, and one chunk may carry several events.
import type { AIEvent } from '../api/ai'

/** One line of the stream as an event; null for what is not data (blank
 * lines, ": comments", "event:"/"id:"/"retry:" fields). */
export function parseSSELine(line: string): AIEvent | null {
  if (line.endsWith('\r')) line = line.slice(0, -1)
  if (!line.startsWith('data:')) return null
  let data = line.slice(5)
  if (data.startsWith(' ')) data = data.slice(1)
  if (!data) return null
  let v: unknown
  try {
    v = JSON.parse(data)
  } catch {
    return { error: 'the hub sent an unreadable event' }
  }
  if (!v || typeof v !== 'object') return { error: 'the hub sent an unreadable event' }
  // keep only the contract's fields, with their types
  const o = v as Record<string, unknown>
  const ev: AIEvent = {}
  if (typeof o.delta === 'string') ev.delta = o.delta
  if (o.done === true) ev.done = true
  if (typeof o.tokens_in === 'number') ev.tokens_in = o.tokens_in
  if (typeof o.tokens_out === 'number') ev.tokens_out = o.tokens_out
  if (typeof o.error === 'string' && o.error) ev.error = o.error
  return ev
}

/** Splits decoded text into lines across chunks. */
export class SSEParser {
  private rest = ''

  /** Events completed by this chunk; a trailing partial line waits. */
  push(chunk: string): AIEvent[] {
    const text = this.rest + chunk
    const out: AIEvent[] = []
    let start = 0
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const ev = parseSSELine(text.slice(start, nl))
      if (ev) out.push(ev)
      start = nl + 1
    }
    this.rest = text.slice(start)
    return out
  }

  /** The last line when the stream ends without a newline. */
  end(): AIEvent[] {
    const ev = parseSSELine(this.rest)
    this.rest = ''
    return ev ? [ev] : []
  }
}

/** How a stream ended. */
export interface StreamEnd {
  /** the {done} event arrived */
  done: boolean
  tokensIn: number
  tokensOut: number
  /** the {error} event's text, if any */
  error: string
}

/**
 * Reads a response body to its end, calling onDelta for each text
 * fragment. A stream that closes without {done} or {error} ends with
 * done false and no error: the caller marks the answer partial.
 */
export async function readAnswer(body: ReadableStream<Uint8Array>, onDelta: (text: string) => void): Promise<StreamEnd> {
  const end: StreamEnd = { done: false, tokensIn: 0, tokensOut: 0, error: '' }
  const parser = new SSEParser()
  const dec = new TextDecoder()
  const reader = body.getReader()
  const take = (evs: AIEvent[]): boolean => {
    for (const ev of evs) {
      if (ev.delta) onDelta(ev.delta)
      if (ev.error) {
        end.error = ev.error
        return true
      }
      if (ev.done) {
        end.done = true
        end.tokensIn = ev.tokens_in ?? 0
        end.tokensOut = ev.tokens_out ?? 0
        return true
      }
    }
    return false
  }
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (take(parser.push(dec.decode(value, { stream: true })))) return end
    }
    take(parser.push(dec.decode()))
    take(parser.end())
    return end
  } finally {
    reader.releaseLock()
  }
}
