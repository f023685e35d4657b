// The project root, found from this file whether it runs from source (lib/) or from dist/lib/.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function findRoot(start: string): string {
  let dir = start
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${start}`)
    dir = parent
  }
  return dir
}

export const PROJECT_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)))
/** `../shared` beside the checkout: read-only data and specification. */
export const SHARED_DIR = join(PROJECT_ROOT, '..', 'shared')
