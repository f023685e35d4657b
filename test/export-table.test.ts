// A table chart in an exported file (lib/export/render.ts, tableSvg): as high as what it holds, its
// status legend right under its rows; a table longer than its box says how many rows are left out.
import t from 'tap'
import { tableSvg } from '../lib/export/render.js'

const legend = {
  items: [
    { label: 'good: 3 % or less', fill: '#1a9641', x: 0, line: 0 },
    { label: 'bad: 4 % or more', fill: '#d7191c', x: 140, line: 0 },
  ],
  lines: 1,
  height: 22,
}
const more = (n: number) => `… ${n} more rows`
const rows = (n: number) => Array.from({ length: n }, (_, i) => [`Place ${i}`, 'March', `${i}`])
/** The y of each legend label, and of the last row's text. */
const ys = (svg: string, text: string) => [...svg.matchAll(new RegExp(`y="([\\d.]+)"[^>]*>${text}`, 'g'))].map((m) => Number(m[1]))

t.test('a short table: no blank band between its rows and its legend, nor under it', async (t) => {
  const { svg, height } = tableSvg(['Location', 'Campaign', 'Missed'], rows(9), 800, 360, more, [], legend)
  const lastRow = ys(svg, 'Place 8')[0]
  const [legendY] = ys(svg, 'good: 3 % or less')
  t.ok(legendY > lastRow && legendY - lastRow <= 40, `the legend (y ${legendY}) right under the last row (y ${lastRow})`)
  t.ok(height < 360 && height >= legendY, `as high as it needs (${height} px of 360)`)
  t.match(svg, `height="${height}"`, 'the drawing says so')
})

t.test('a long table: the rows that fit, how many more, the legend, within its box', async (t) => {
  const { svg, height } = tableSvg(['Location', 'Campaign', 'Missed'], rows(100), 800, 360, more, [], legend)
  const [moreY] = ys(svg, '… \\d+ more rows')
  const [legendY] = ys(svg, 'good: 3 % or less')
  t.ok(moreY && legendY > moreY, `the count (y ${moreY}), then the legend (y ${legendY})`)
  t.ok(height <= 360 && height >= legendY, `within its box (${height} px of 360)`)
})
