// Precompresses the built console: next to every text asset of ../dist
// (JavaScript, CSS, HTML, SVG, JSON) larger than 1 KiB it writes name.gz
// (gzip, level 9) and name.br (brotli, quality 11), using Node's own zlib.
// The hub serves the smaller variant the browser accepts (ui/embed.go), so a
// first sign-in moves about a third of the bytes and the hub never spends
// CPU compressing the same file twice. A variant that does not save at least
// 5% is not written.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist')
const TEXT = new Set(['.js', '.mjs', '.css', '.html', '.svg', '.json', '.txt', '.map'])

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) yield* files(p)
    else yield p
  }
}

let raw = 0
let br = 0
for (const p of [...files(dist)]) {
  if (!TEXT.has(extname(p))) continue
  const body = readFileSync(p)
  if (body.length <= 1024) continue
  const variants = {
    '.gz': gzipSync(body, { level: 9 }),
    '.br': brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      },
    }),
  }
  raw += body.length
  br += variants['.br'].length
  for (const [ext, out] of Object.entries(variants)) {
    if (out.length <= body.length * 0.95) writeFileSync(p + ext, out)
  }
}
console.log(`precompressed ${(raw / 1024).toFixed(0)} KiB of text assets to ${(br / 1024).toFixed(0)} KiB (brotli)`)
