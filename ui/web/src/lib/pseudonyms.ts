// Pseudonym tokens back to real values, in the browser only (issue 32):
// the hub sends the model ip-1, host-2, mac-1, user-1, ip6-1 and tok-1
// (text that already looked like a token) and gives the console the
// conversation's map; answers are shown with the real value and the token
// beside it. The grammar is app/ai/prompt/pseudo.go matchToken: a kind,
// "-", digits, with no word character [A-Za-z0-9_] on either side.
import type { AIPseudonym } from '../api/ai'

// ip6 before ip, as Reveal tries them
const KINDS = ['ip6', 'ip', 'mac', 'user', 'host', 'tok']

export interface RevealPart {
  text: string
  /** set when text is the real value of this token */
  token?: string
  kind?: string
}

function isWord(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_]/.test(c)
}

/** The end of a token-looking string at i, or -1 (the caller checks the left side). */
export function matchToken(s: string, i: number): number {
  for (const k of KINDS) {
    if (!s.startsWith(k, i) || i + k.length + 1 >= s.length || s[i + k.length] !== '-') continue
    const j = i + k.length + 1
    let d = j
    while (d < s.length && s[d] >= '0' && s[d] <= '9') d++
    if (d === j || isWord(s[d])) return -1
    return d
  }
  return -1
}

/** token → mapping, for lookups while rendering. */
export function pseudonymMap(list: AIPseudonym[] | null | undefined): Map<string, AIPseudonym> {
  return new Map((list ?? []).map((m) => [m.token, m]))
}

/** text cut into plain runs and revealed tokens; unknown tokens stay as they are. */
export function revealParts(text: string, map: ReadonlyMap<string, AIPseudonym>): RevealPart[] {
  const out: RevealPart[] = []
  if (!map.size) return text ? [{ text }] : []
  let last = 0
  for (let i = 0; i < text.length; i++) {
    if (i > 0 && isWord(text[i - 1])) continue
    const end = matchToken(text, i)
    if (end < 0) continue
    const m = map.get(text.slice(i, end))
    if (m) {
      if (i > last) out.push({ text: text.slice(last, i) })
      out.push({ text: m.value, token: m.token, kind: m.kind })
      last = end
    }
    i = end - 1
  }
  if (last < text.length) out.push({ text: text.slice(last) })
  return out
}

/** The text with every known token replaced by its value (copying an answer). */
export function reveal(text: string, map: ReadonlyMap<string, AIPseudonym>): string {
  return revealParts(text, map)
    .map((p) => p.text)
    .join('')
}
