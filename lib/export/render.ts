// Charts as files: ECharts' server-side SVG of the option the app draws (no browser), laid out as a
// dashboard (a heading, then its rows of charts side by side), and that SVG as PNG or JPEG (resvg) or
// as a PDF of a page per row (pdfkit, svg-to-pdfkit). Text is set in the DejaVu fonts the package
// ships (dejavu-fonts-ttf): nothing depends on the fonts of the machine.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Resvg } from '@resvg/resvg-js'
import * as echarts from 'echarts'
import jpeg from 'jpeg-js'
import PDFDocument from 'pdfkit'
import SVGtoPDF from 'svg-to-pdfkit'

const FONT_DIR = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf')
const FONTS = { regular: join(FONT_DIR, 'DejaVuSans.ttf'), bold: join(FONT_DIR, 'DejaVuSans-Bold.ttf') }
/** The family charts are set in: the shipped font first, then what a viewer of the SVG has. */
export const FONT_FAMILY = "'DejaVu Sans', system-ui, sans-serif"

/** One chart of a row: its title and its drawing (an SVG document of `width` × `height`). */
export interface DrawnChart {
  title: string
  svg: string
  width: number
  height: number
}

/** What a file of charts holds: a heading, lines under it, rows of charts. */
export interface Layout {
  title: string
  lines: string[]
  rows: DrawnChart[][]
}

/** Pixels between and around the charts; the heading's height; a chart caption's height. */
const GAP = 16
const HEADING = 56
const LINE = 18
const CAPTION = 24
export const CHART_HEIGHT = 360

/** Whether a chart's title goes above its drawing: not in a file of that chart alone, headed by the same title. */
const captioned = (layout: Layout, chart: DrawnChart) => !(layout.rows.flat().length === 1 && chart.title === layout.title)

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c]!)

/**
 * Text measured in the font it is set in. Without a canvas ECharts guesses each width from a table of
 * another font's, narrower than DejaVu Sans: a legend's names then overran each other and axis labels
 * were spaced for words shorter than they are. Measured, the drawing is laid out for what it shows.
 */
const measurer = new PDFDocument({ autoFirstPage: false })
measurer.registerFont('regular', FONTS.regular)
measurer.registerFont('bold', FONTS.bold)
/** The character zrender measures a line's height by (zrender/lib/contain/text.js, getLineHeight). */
const WIDE_CHARACTER = '国'
echarts.setPlatformAPI({
  measureText(text: string, font?: string) {
    const size = Number(/(\d+(?:\.\d+)?)px/.exec(font ?? '')?.[1] ?? 12)
    const bold = /\bbold(?:er)?\b|\b[6-9]00\b/.test(font ?? '')
    // zrender takes a line's height from the width of a wide character (国), which DejaVu Sans does not
    // hold: measured as its missing glyph, lines of a label several lines tall were drawn over each
    // other. A wide character is an em wide, as a browser measures it.
    if (text === WIDE_CHARACTER) return { width: size }
    return {
      width: measurer
        .font(bold ? 'bold' : 'regular')
        .fontSize(size)
        .widthOfString(text),
    }
  },
})

/** ECharts' SVG of an option, rendered without a DOM. */
export function chartSvg(option: Record<string, unknown>, width: number, height: number): string {
  const chart = echarts.init(null as unknown as HTMLElement, null, { renderer: 'svg', ssr: true, width, height })
  try {
    chart.setOption(option)
    return chart.renderToSVGString()
  } finally {
    chart.dispose()
  }
}

/** A message in place of a drawing (no values, no shapes). */
export function messageSvg(text: string, width: number, height: number): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><text x="${GAP}" y="${2 * GAP}" font-family="${FONT_FAMILY}" font-size="14" fill="#444">${escapeXml(text)}</text></svg>`
}

/** Where a chart's status legend goes (web/chart-parts.js, statusLegendLayout). */
export interface StatusLegend {
  items: Array<{ label: string; fill: string | undefined; x: number; line: number }>
  lines: number
  height: number
}

/**
 * A table as an SVG: a header row and as many rows as fit in `height`, then how many more there are
 * (the CSV holds every row). `fills`: each cell's status colour, drawn as the app's table draws it (a
 * light tint of the cell, an edge in the full colour), and `legend` names them under the rows. Its
 * height: what it holds, at most `height`.
 */
export function tableSvg(
  header: string[],
  rows: string[][],
  width: number,
  height: number,
  moreRows: (count: number) => string,
  fills: Array<Array<string | undefined>> = [],
  legend: StatusLegend = { items: [], lines: 0, height: 0 },
): { svg: string; height: number } {
  const rowHeight = 20
  const fit = Math.max(1, Math.floor((height - legend.height - 2 * rowHeight) / rowHeight))
  const shown = rows.slice(0, rows.length > fit + 1 ? fit : fit + 1)
  const columnWidth = width / Math.max(1, header.length)
  const cell = (text: string, column: number, y: number, bold = false) => {
    // Numbers right-aligned in their column, names left.
    const numeric = column >= 2
    const x = numeric ? (column + 1) * columnWidth - 8 : column * columnWidth + 4
    return `<text x="${x.toFixed(1)}" y="${y}" text-anchor="${numeric ? 'end' : 'start'}"${bold ? ' font-weight="bold"' : ''}>${escapeXml(text)}</text>`
  }
  const lines = [
    header.map((text, c) => cell(text, c, rowHeight - 6, true)).join(''),
    `<line x1="0" x2="${width}" y1="${rowHeight}" y2="${rowHeight}" stroke="#999"/>`,
    ...shown.map((row, r) =>
      row
        .map((text, c) => {
          const fill = fills[r]?.[c]
          const [x, y] = [(c * columnWidth).toFixed(1), (r + 1) * rowHeight + 1]
          const tint = fill
            ? `<rect x="${x}" y="${y}" width="${columnWidth.toFixed(1)}" height="${rowHeight - 2}" fill="${fill}" fill-opacity="0.22"/><rect x="${x}" y="${y}" width="3" height="${rowHeight - 2}" fill="${fill}"/>`
            : ''
          return tint + cell(text, c, (r + 2) * rowHeight - 6)
        })
        .join(''),
    ),
  ]
  const more = shown.length < rows.length
  if (more) lines.push(cell(moreRows(rows.length - shown.length), 0, (shown.length + 2) * rowHeight - 6))
  // The statuses' legend right under the rows (at the box's foot it stood apart from a short table).
  const legendTop = (shown.length + (more ? 2 : 1)) * rowHeight + 6
  for (const item of legend.items) {
    const top = legendTop + 4 + item.line * 18
    lines.push(
      `<rect x="${item.x}" y="${top}" width="12" height="12" fill="${item.fill ?? '#fff'}" stroke="#57606a"/>`,
      `<text x="${item.x + 16}" y="${top + 11}">${escapeXml(item.label)}</text>`,
    )
  }
  // As high as what it holds, at most `height`: a short table leaves no blank band under it.
  const used = Math.min(height, legendTop + (legend.items.length ? legend.height : 0))
  return {
    svg: `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${used}" viewBox="0 0 ${width} ${used}"><g font-family="${FONT_FAMILY}" font-size="12" fill="#1b1f23">${lines.join('')}</g></svg>`,
    height: used,
  }
}

/** The widths of a row's charts within `width`: equal shares with gaps. */
export function chartWidths(count: number, width: number): number {
  return Math.floor((width - GAP * (count + 1)) / Math.max(1, count))
}

/** A dashboard (or a chart) as one SVG document of `width`: its heading, then each row of charts. */
export function layoutSvg(layout: Layout, width: number): string {
  const parts: string[] = []
  let y = GAP + 22
  parts.push(`<text x="${GAP}" y="${y}" font-size="22" font-weight="bold">${escapeXml(layout.title)}</text>`)
  for (const line of layout.lines) {
    y += LINE
    parts.push(`<text x="${GAP}" y="${y}" font-size="13" fill="#444">${escapeXml(line)}</text>`)
  }
  y = Math.max(y + GAP, HEADING)
  for (const row of layout.rows) {
    let x = GAP
    for (const chart of row) {
      if (captioned(layout, chart)) parts.push(`<text x="${x}" y="${y + 16}" font-size="15" font-weight="bold">${escapeXml(chart.title)}</text>`)
      // The chart's own document, placed: a nested <svg> keeps its coordinates.
      parts.push(chart.svg.replace(/^<svg /, `<svg x="${x}" y="${y + CAPTION}" `))
      x += chart.width + GAP
    }
    y += CAPTION + Math.max(0, ...row.map((c) => c.height)) + GAP
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}"><rect width="100%" height="100%" fill="#fff"/><g font-family="${FONT_FAMILY}" fill="#1b1f23">${parts.join('')}</g></svg>`
}

const resvgOptions = (width: number) => ({
  fitTo: { mode: 'width' as const, value: width },
  background: '#fff',
  font: { fontFiles: [FONTS.regular, FONTS.bold], loadSystemFonts: false, defaultFontFamily: 'DejaVu Sans' },
})

/**
 * The most pixels a picture may have: 40 million (160 MB of RGBA while it is made). A dashboard of many
 * rows asked wide would otherwise hold that much memory per request.
 */
export const MAX_PIXELS = 40_000_000

/** A picture over MAX_PIXELS: its size, and the widest width that fits (the export's 400 names them). */
export class PictureTooLarge extends Error {
  constructor(
    readonly width: number,
    readonly height: number,
    readonly widest: number,
  ) {
    super()
  }
}

/** The renderer of an SVG at `width`, once its size is known to be within MAX_PIXELS. */
function rendererOf(svg: string, width: number): Resvg {
  const renderer = new Resvg(svg, resvgOptions(width))
  const height = Math.ceil((renderer.height * width) / renderer.width)
  if (width * height > MAX_PIXELS) throw new PictureTooLarge(width, height, Math.floor(Math.sqrt((MAX_PIXELS * renderer.width) / renderer.height)))
  return renderer
}

/** An SVG as a PNG `width` pixels wide. */
export function pngOf(svg: string, width: number): Buffer {
  return rendererOf(svg, width).render().asPng()
}

/** An SVG as a JPEG `width` pixels wide (quality 90). */
export function jpegOf(svg: string, width: number): Buffer {
  const image = rendererOf(svg, width).render()
  return jpeg.encode({ data: image.pixels, width: image.width, height: image.height }, 90).data
}

/**
 * `svg` with each text that ECharts draws over a halo (`paint-order="stroke"`: a light outline under
 * dark letters, so that a label stays legible over a bar or a region) as two texts: the outline, then
 * the letters. svg-to-pdfkit does not know paint-order and strokes over the fill, which drew every
 * value and pie label white on white in a PDF.
 */
export function haloUnderText(svg: string): string {
  return svg.replace(/<text\b([^>]*?) paint-order="stroke"([^>]*)>([^<]*)<\/text>/g, (_whole, before: string, after: string, text: string) => {
    const attributes = before + after
    const outline = attributes.replace(/ fill="[^"]*"/, ' fill="none"')
    const letters = attributes.replace(/ stroke(?:-width|-miterlimit)?="[^"]*"/g, '')
    return `<text${outline}>${text}</text><text${letters}>${text}</text>`
  })
}

/** The papers a PDF is laid out for, landscape, in points (pdfkit's names); the margin around a page. */
export const PAPERS = { a4: { size: 'A4', width: 842, height: 595 }, letter: { size: 'LETTER', width: 792, height: 612 } } as const
export type Paper = keyof typeof PAPERS
const MARGIN = 36

/**
 * The width a PDF's layout is drawn at: a row's charts then fill the page at one pixel a point, not
 * scaled (svg-to-pdfkit drops the end of right-aligned text in a scaled drawing).
 */
export const pdfLayoutWidth = (paper: Paper) => PAPERS[paper].width - 2 * MARGIN + 2 * GAP

/** The heading of a PDF's page: its title's line, each of up to four lines under it, the gap after it. */
const PDF_HEADING = 22 + 4 * 12 + 12

/**
 * The height a PDF's charts are drawn at: a row fills the page under its heading, as a row of the
 * screen fills its band (drawn at the screen's height, a row left a third of the page empty).
 */
export const pdfChartHeight = (paper: Paper) => PAPERS[paper].height - 2 * MARGIN - PDF_HEADING - CAPTION

/** The layout as a PDF on `paper`: a page per row of charts, each under the heading (title and lines). */
export async function pdfOf(layout: Layout, made: Date, paper: Paper): Promise<Buffer> {
  const PAGE = { ...PAPERS[paper], margin: MARGIN }
  const doc = new PDFDocument({
    size: PAGE.size,
    layout: 'landscape',
    margin: PAGE.margin,
    autoFirstPage: false,
    info: { Title: layout.title, CreationDate: made },
  })
  doc.registerFont('regular', FONTS.regular)
  doc.registerFont('bold', FONTS.bold)
  const chunks: Buffer[] = []
  doc.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = new Promise((resolve) => doc.on('end', resolve))
  const usable = PAGE.width - 2 * PAGE.margin
  for (const row of layout.rows.length ? layout.rows : [[]]) {
    doc.addPage()
    doc.font('bold').fontSize(18).fillColor('#1b1f23').text(layout.title, PAGE.margin, PAGE.margin, { width: usable })
    doc.font('regular').fontSize(10).fillColor('#444')
    for (const line of layout.lines) doc.text(line, { width: usable })
    const top = doc.y + 12
    // The row's drawings scaled to share the page's width (and to fit its height).
    const natural = row.reduce((sum, chart) => sum + chart.width, 0) + GAP * Math.max(0, row.length - 1)
    const scale = Math.min(1, usable / Math.max(1, natural), (PAGE.height - PAGE.margin - top - CAPTION) / Math.max(1, ...row.map((c) => c.height)))
    let x = PAGE.margin
    for (const chart of row) {
      if (captioned(layout, chart))
        doc
          .font('bold')
          .fontSize(12)
          .fillColor('#1b1f23')
          .text(chart.title, x, top, { width: chart.width * scale, lineBreak: false, ellipsis: true })
      SVGtoPDF(doc, haloUnderText(chart.svg), x, top + CAPTION * 0.8, {
        width: chart.width * scale,
        height: chart.height * scale,
        fontCallback: (_family: string, bold: boolean) => (bold ? 'bold' : 'regular'),
        // A pixel of the drawing is a point of the page, as `width` and `height` were reckoned
        // (svg-to-pdfkit otherwise takes 1 px as 0.75 pt and draws every chart at three quarters).
        assumePt: true,
      })
      x += (chart.width + GAP) * scale
    }
  }
  doc.end()
  await ended
  return Buffer.concat(chunks)
}
