// A table whose columns sort it: which column and which way, and each column's header, a button that
// sorts by it (again: the other way). The chart's table view and the data browser share it.
import { useState } from 'preact/hooks'
import { html } from '../html.js'

/**
 * The sort of a table and the header of its columns. The first two columns (a place, a campaign or
 * period) sort ascending first, the values descending. `onSorted` runs at each change (back to the
 * first page). `initial`: the sort before any click (by default none: the rows as they came).
 * @param {() => void} onSorted
 * @param {{ column: number, descending: boolean }} [initial]
 * @returns {[{ column: number, descending: boolean }, (label: string, column: number) => any]}
 */
export function useSortableColumns(onSorted, initial = { column: -1, descending: false }) {
  const [sort, setSort] = useState(initial)
  const heading = (label, column) => {
    const sorted = sort.column === column
    const next = () => {
      setSort({ column, descending: sorted ? !sort.descending : column >= 2 })
      onSorted()
    }
    return html`<th scope="col" key=${column} aria-sort=${sorted ? (sort.descending ? 'descending' : 'ascending') : undefined}>
      <button type="button" class="sort" onClick=${next}>${label}<span aria-hidden="true">${sorted ? (sort.descending ? ' ▼' : ' ▲') : ''}</span></button>
    </th>`
  }
  return [sort, heading]
}
