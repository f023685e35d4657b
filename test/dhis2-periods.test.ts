// DHIS2's periods as the days they cover: each kind, ISO weeks across a year's edge, and a refusal
// that names what is read.
import t from 'tap'
import { periodDays } from '../lib/dhis2/periods.js'

t.test('DHIS2 periods: the days each covers', async (t) => {
  t.same(periodDays('20261015'), { first: '2026-10-15', last: '2026-10-15' }, 'daily')
  t.same(periodDays('2026W42'), { first: '2026-10-12', last: '2026-10-18' }, 'weekly: Monday to Sunday')
  t.same(periodDays('2026W1'), { first: '2025-12-29', last: '2026-01-04' }, 'ISO week 1 starts in the year before')
  t.same(periodDays('2026W53'), { first: '2026-12-28', last: '2027-01-03' }, '2026 has 53 weeks')
  t.match(periodDays('2027W53'), { problem: /2027 has weeks 1 to 52/ }, '2027 has 52')
  t.same(periodDays('202602'), { first: '2026-02-01', last: '2026-02-28' }, 'monthly')
  t.same(periodDays('2024Q1'), { first: '2024-01-01', last: '2024-03-31' }, 'quarterly')
  t.same(periodDays('2026'), { first: '2026-01-01', last: '2026-12-31' }, 'yearly')
  t.match(periodDays('20260230'), { problem: /not a day/ })
  t.match(periodDays('202613'), { problem: /not a month/ })
  t.match(periodDays('2026S1'), { problem: /not a period this API reads \(daily 20261015, weekly 2026W42/ }, 'six-monthly: refused, naming what is read')
})
