// Bundle budget: the built console's JavaScript, gzipped, must stay under
// 220 KB in total, every lazily loaded view included (run after `make ui`;
// node --test scripts/budget.test.mjs). It was 600 KB while the console
// carried ECharts next to uPlot (289 KB used); with one chart library it
// was about 115 KB, and the budget keeps a second one from creeping back
// in. 200 KB until the Reports page (issue 31, 8.7 KB, a lazy chunk that
// no other page loads) took the total to 204 KB.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

export const BUDGET_BYTES = 220 * 1024
const dist = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist')

function walk(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? walk(p) : [p]
  })
}

test('built JavaScript is under the 220 KB gzip budget', () => {
  const files = walk(dist).filter((f) => f.endsWith('.js'))
  assert.ok(files.length > 0, `no JavaScript in ${dist}: run make ui first`)
  let total = 0
  const rows = []
  for (const f of files) {
    const gz = gzipSync(readFileSync(f), { level: 9 }).length
    total += gz
    rows.push(`${relative(dist, f)}\t${(gz / 1024).toFixed(1)} KB gzip`)
  }
  console.log(rows.join('\n'))
  console.log(`total JavaScript: ${(total / 1024).toFixed(1)} KB gzip (budget ${BUDGET_BYTES / 1024} KB)`)
  assert.ok(total <= BUDGET_BYTES, `JavaScript is ${(total / 1024).toFixed(1)} KB gzip, over the ${BUDGET_BYTES / 1024} KB budget`)
})
