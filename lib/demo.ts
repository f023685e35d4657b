import type { Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
export async function loadDemoData(_db: Kysely<DB>): Promise<boolean> { return false }
