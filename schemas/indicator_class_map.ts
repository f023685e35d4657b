import { col, table } from './columns.js'

/** A label of a value of a class indicator (LQAS: 1 "pass"); the labels go with their indicator. */
export const IndicatorClassMap = table(
  'indicator_class_map',
  {
    id: col.id(),
    indicator_id: col.fk('indicator', { onDelete: 'cascade' }),
    value: col.float(),
    label: col.string({ maxLength: 255 }),
  },
  {
    unique: [
      ['indicator_id', 'value'],
      ['indicator_id', 'label'],
    ],
  },
)
