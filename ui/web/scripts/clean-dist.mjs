// Empties ../dist before a build, keeping .keep: the Go package ui embeds
// the folder with go:embed, which needs at least one file in it even when
// no console was built (plain `go build` without npm).
import { mkdirSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist')
mkdirSync(dist, { recursive: true })
for (const name of readdirSync(dist)) {
  if (name !== '.keep') rmSync(join(dist, name), { recursive: true, force: true })
}
if (!existsSync(join(dist, '.keep'))) writeFileSync(join(dist, '.keep'), '')
