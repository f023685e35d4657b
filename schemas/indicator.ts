import { col, table } from './columns.js'

export const DATA_FORMATS = ['int', 'pct', 'bool', 'class', 'date', 'date_int'] as const

export const Indicator = table('indicator', {
  id: col.id(),
  short_name: col.string({ maxLength: 255, unique: true }),
  name: col.string({ maxLength: 255, unique: true }),
  description: col.string({ maxLength: 255, default: '' }),
  is_reported: col.boolean({ default: true }),
  data_format: col.string({ maxLength: 10, enum: DATA_FORMATS }),
  resource_name: col.string({ maxLength: 10, enum: ['campaign', 'date'], default: 'campaign' }),
  good_bound: col.float({ nullable: true }),
  bad_bound: col.float({ nullable: true }),
  // An aggregated value reported by a smaller share of its location's children is flagged (0 to 1).
  coverage_threshold: col.float({ nullable: true }),
  source_name: col.string({ maxLength: 55, default: '' }),
  // Caches rewritten by indicator_to_tag writes and cache_meta (resource-api §16).
  bound_json: col.json({ readonly: true, default: [] }),
  tag_json: col.json({ readonly: true, default: [] }),
  created_at: col.createdAt(),
})
