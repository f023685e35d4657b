// bench:scale's curve as an SVG: each operation's time against the raw values stored, both axes
// logarithmic, so a flat line is an operation that does not grow and a 45° one grows linearly.

export interface Series {
  name: string
  points: Array<[values: number, ms: number]>
}

const WIDTH = 760
const HEIGHT = 420
const PLOT = { left: 70, right: 250, top: 20, bottom: 50 }
const COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939']

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The powers of ten from below `min` to above `max`. */
function decades(min: number, max: number): number[] {
  const out: number[] = []
  for (let p = Math.floor(Math.log10(min)); p <= Math.ceil(Math.log10(max)); p++) out.push(10 ** p)
  return out
}

const label = (n: number) => (n >= 1e6 ? `${n / 1e6} M` : n >= 1e3 ? `${n / 1e3} k` : String(n))

export function curveSvg(title: string, series: Series[]): string {
  const xs = series.flatMap((s) => s.points.map(([x]) => x))
  const ys = series.flatMap((s) => s.points.map(([, y]) => Math.max(y, 0.1)))
  const xTicks = decades(Math.min(...xs), Math.max(...xs))
  const yTicks = decades(Math.min(...ys), Math.max(...ys))
  const [x0, x1] = [Math.log10(xTicks[0]), Math.log10(xTicks.at(-1) ?? 10)]
  const [y0, y1] = [Math.log10(yTicks[0]), Math.log10(yTicks.at(-1) ?? 10)]
  const plotWidth = WIDTH - PLOT.left - PLOT.right
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom
  const px = (x: number) => PLOT.left + ((Math.log10(x) - x0) / (x1 - x0 || 1)) * plotWidth
  const py = (y: number) => PLOT.top + plotHeight - ((Math.log10(Math.max(y, 0.1)) - y0) / (y1 - y0 || 1)) * plotHeight
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${PLOT.left}" y="14" font-weight="bold">${escapeXml(title)}</text>`,
  ]
  for (const t of xTicks) {
    parts.push(`<line x1="${px(t)}" x2="${px(t)}" y1="${PLOT.top}" y2="${PLOT.top + plotHeight}" stroke="#ddd"/>`)
    parts.push(`<text x="${px(t)}" y="${PLOT.top + plotHeight + 16}" text-anchor="middle">${label(t)}</text>`)
  }
  for (const t of yTicks) {
    parts.push(`<line x1="${PLOT.left}" x2="${PLOT.left + plotWidth}" y1="${py(t)}" y2="${py(t)}" stroke="#ddd"/>`)
    parts.push(`<text x="${PLOT.left - 6}" y="${py(t) + 4}" text-anchor="end">${label(t)}</text>`)
  }
  parts.push(`<text x="${PLOT.left + plotWidth / 2}" y="${HEIGHT - 12}" text-anchor="middle">raw values stored</text>`)
  parts.push(`<text transform="translate(16 ${PLOT.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">ms</text>`)
  for (const [i, s] of series.entries()) {
    const colour = COLOURS[i % COLOURS.length]
    const path = s.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')
    parts.push(`<polyline points="${path}" fill="none" stroke="${colour}" stroke-width="2"/>`)
    for (const [x, y] of s.points) parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${colour}"/>`)
    const legendY = PLOT.top + 10 + i * 18
    parts.push(`<line x1="${WIDTH - PLOT.right + 15}" x2="${WIDTH - PLOT.right + 35}" y1="${legendY}" y2="${legendY}" stroke="${colour}" stroke-width="2"/>`)
    parts.push(`<text x="${WIDTH - PLOT.right + 40}" y="${legendY + 4}">${escapeXml(s.name)}</text>`)
  }
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}
