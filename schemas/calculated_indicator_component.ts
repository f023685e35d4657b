import { col, table } from './columns.js'

export const CALCULATIONS = ['PART_TO_BE_SUMMED', 'NUMERATOR', 'DENOMINATOR', 'WHOLE_OF_DIFFERENCE', 'PART_OF_DIFFERENCE'] as const

export const CalculatedIndicatorComponent = table(
  'calculated_indicator_component',
  {
    id: col.id(),
    indicator_id: col.fk('indicator'),
    indicator_component_id: col.fk('indicator'),
    calculation: col.string({ maxLength: 255, enum: CALCULATIONS }),
    created_at: col.createdAt(),
  },
  { unique: [['indicator_id', 'indicator_component_id', 'calculation']] },
)
