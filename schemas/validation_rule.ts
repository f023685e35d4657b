import { col, table } from './columns.js'

/** How a rule compares its left indicator's value with its right one's. */
export const VALIDATION_OPERATORS = ['<=', '<', '=', '>=', '>', '!='] as const
/** What a violated rule does: `flag` reports it, `block` also refuses the write that caused it. */
export const VALIDATION_ACTIONS = ['flag', 'block'] as const

/** A validation rule (sql/022): left operator right, over the final values at one location and campaign. */
export const ValidationRule = table('validation_rule', {
  id: col.id(),
  name: col.string({ maxLength: 255, unique: true }),
  left_indicator_id: col.fk('indicator', { onDelete: 'cascade' }),
  operator: col.string({ maxLength: 2, enum: VALIDATION_OPERATORS }),
  right_indicator_id: col.fk('indicator', { onDelete: 'cascade' }),
  action: col.string({ maxLength: 5, enum: VALIDATION_ACTIONS, default: 'flag' }),
  created_at: col.createdAt(),
})
