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

t.test("ADX periods: a first day and an ISO 8601 duration, as DHIS2's table of ADX periods gives them", async (t) => {
  t.same(periodDays('2017-10-01/P1D'), { first: '2017-10-01', last: '2017-10-01' }, 'daily')
  t.same(periodDays('2017-10-02/P7D'), { first: '2017-10-02', last: '2017-10-08' }, 'weekly')
  t.same(periodDays('2017-10-04/P7D'), { first: '2017-10-04', last: '2017-10-10' }, 'weekly, from a Wednesday')
  t.same(periodDays('2017-10-02/P14D'), { first: '2017-10-02', last: '2017-10-15' }, 'bi-weekly')
  t.same(periodDays('2017-10-01/P1M'), { first: '2017-10-01', last: '2017-10-31' }, 'monthly')
  t.same(periodDays('2017-11-01/P2M'), { first: '2017-11-01', last: '2017-12-31' }, 'bi-monthly')
  t.same(periodDays('2017-10-01/P3M'), { first: '2017-10-01', last: '2017-12-31' }, 'quarterly')
  t.same(periodDays('2017-10-01/P6M'), { first: '2017-10-01', last: '2018-03-31' }, 'six-monthly April')
  t.same(periodDays('2017-01-01/P1Y'), { first: '2017-01-01', last: '2017-12-31' }, 'yearly')
  t.same(periodDays('2017-07-01/P1Y'), { first: '2017-07-01', last: '2018-06-30' }, 'financial July')
  t.match(periodDays('2017-02-30/P1M'), { problem: /2017-02-30 is not a day/ })
  t.match(periodDays('2017-02-01/P0M'), { problem: /at least one month/ })
  t.match(periodDays('2017-02-01/PT1H'), { problem: /not a period this API reads/ }, 'hours: not a period')
})
