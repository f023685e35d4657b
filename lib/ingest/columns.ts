// The columns each type of upload must have (ingestion §3.1), and the conflict policies a document may
// name: what both the event loop and a parsing thread check.
import { ApiError } from '../core/errors.js'
import type { CONFLICT_POLICIES } from '../../schemas/source_doc.js'

export const REQUIRED_COLUMNS = { campaign: ['geocode', 'campaign'], date: ['geocode', 'data_date', 'unique_key'] } as const
export type FileType = keyof typeof REQUIRED_COLUMNS

/**
 * A column the template writes for people (the location's name beside its code); uploads ignore it
 * instead of offering it as an indicator to map.
 */
export const LABEL_COLUMN = 'location_name'
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number]

/** 422 MISSING_COLUMN naming every absent role column (§3.1). */
export function checkColumns(fileType: FileType, header: string[]) {
  const missing = REQUIRED_COLUMNS[fileType].filter((c) => !header.includes(c))
  if (!missing.length) return
  const message = missing.length === 1 ? `${missing[0]} is a required column.` : `${missing.join(', ')} are required columns.`
  throw new ApiError(422, 'MISSING_COLUMN', message, { missing })
}
