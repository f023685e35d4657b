// One cell of the data-entry grid (an enterable value, its state in words) and a cell's history.
import { useEffect, useRef, useState } from 'preact/hooks'
import { list, query } from '../api.js'
import { fileNameOf, formatTime, formatValue } from '../format.js'
import { html } from '../html.js'
import { useRead } from './use-read.js'
import { t } from '../i18n.js'
import { inputText } from '../entry-values.js'
import { ValueFollowups } from './quality-followup.js'

/**
 * A cell's state as it is said under its value; a value saved or read far from what its place usually
 * reports says so (`unusual`: why, in words), after any rule it breaks.
 */
export function stateWords(state, format, unusual) {
  // "Saved" only of a value saved from this page: one read as the page opened is just unusual.
  if (!state) return unusual ? t('Unusual: {why}. Check it, and correct it if it is a mistake.', { why: unusual }) : ''
  const warning = unusual ? t('Saved, but unusual: {why}. Check it, and correct it if it is a mistake.', { why: unusual }) : ''
  if (state.state === 'saving') return t('Saving…')
  if (state.state === 'waiting') return t('Waiting to be sent')
  if (state.state === 'invalid') return state.message
  if (state.state === 'refused') return t('Refused: {reason}', { reason: state.message })
  if (state.state === 'conflict') {
    const theirs = state.current ? formatValue(state.current.value, format) : '?'
    return t('Changed by someone else since the form was loaded: {value} there now', { value: theirs })
  }
  // Each flag in words: "Flagged by “rule”: 5,000 should be ≤ 900".
  if (state.flags?.length) return [...state.flags, warning].filter(Boolean).join('; ')
  if (warning) return warning
  if (state.state === 'saved') return t('Saved')
  return ''
}

const MODIFIERS = new Set(['Shift', 'Control', 'Alt', 'Meta'])

/**
 * An enterable cell. `onCommit(text)` when the value is left changed (Tab, Enter, a click away);
 * Enter also moves down (`onEnter`). A conflict offers to keep one's value or take the other's.
 */
export function EntryCell({ id, label, format, value, state, unusual, columnIndex, onDraft, onCommit, onEnter, onKeepMine, onTakeTheirs, onHistory }) {
  const [text, setText] = useState(inputText(value, format))
  // The text last committed: Enter commits, and leaving the cell then fires its change too; one edit is saved once.
  const committed = useRef(null)
  useEffect(() => {
    setText(inputText(value, format))
    committed.current = null
  }, [value, format])
  // Whether the whole value is still selected as focusing the cell left it: the first click on a cell
  // (or on the one Enter moved to) keeps it so, and what is typed then replaces the value, as in a
  // spreadsheet; a second click, or a key, places the caret to edit within it.
  const wholeSelected = useRef(false)
  const commit = (typed) => {
    if (typed === committed.current) return
    committed.current = typed
    onCommit(typed)
  }
  const words = stateWords(state, format, unusual)
  const kind =
    state?.state === 'conflict' || state?.state === 'refused' || state?.state === 'invalid' ? 'error' : state?.flags?.length || unusual ? 'flag' : state?.state
  // What the value's control says of itself: its cell, its state, and Alt+H for its history.
  const described = {
    id,
    class: 'entry-value',
    'data-column': columnIndex,
    'aria-label': label,
    'aria-describedby': `${id}-state`,
    'aria-invalid': kind === 'error' ? 'true' : undefined,
    'aria-keyshortcuts': 'Alt+H',
  }
  const onKeyDown = (e) => {
    if (!MODIFIERS.has(e.key)) wholeSelected.current = false
    // Alt+H: the cell's history (its button is left out of Tab's way, which goes from value to value). By code: a Mac's Option+H types "˙".
    if (e.altKey && e.code === 'KeyH') {
      e.preventDefault()
      return onHistory()
    }
    if (e.key !== 'Enter') return
    e.preventDefault()
    commit(e.target.value)
    onEnter()
  }
  // A yes/no flag is chosen, not typed: empty, Yes or No.
  const control =
    format === 'bool'
      ? html`<select ...${described} value=${text} onChange=${(e) => {
          setText(e.target.value)
          commit(e.target.value)
        }} onKeyDown=${onKeyDown}>
          <option value="">–</option>
          <option value=${t('Yes')}>${t('Yes')}</option>
          <option value=${t('No')}>${t('No')}</option>
        </select>`
      : html`<input
          ...${described}
          inputmode="decimal"
          autocomplete="off"
          value=${text}
          onInput=${(e) => {
            wholeSelected.current = false
            setText(e.target.value)
            onDraft(e.target.value)
          }}
          onChange=${(e) => commit(e.target.value)}
          onFocus=${(e) => {
            e.target.select()
            wholeSelected.current = true
          }}
          onMouseUp=${(e) => {
            if (!wholeSelected.current) return
            wholeSelected.current = false
            // The press placed the caret; the value is selected again.
            e.preventDefault()
            e.target.select()
          }}
          onKeyDown=${onKeyDown}
        />`
  return html`<td class=${`entry ${kind ? `entry-${kind}` : ''}`}>
    ${control}
    <span id=${`${id}-state`} class="entry-state" data-state=${kind ?? ''}>${words}</span>
    ${
      state?.state === 'conflict' &&
      html`<span class="actions">
        <button type="button" class="secondary" onClick=${onKeepMine}>${t('Keep mine')}</button>
        <button type="button" class="secondary" onClick=${onTakeTheirs}>${t('Take theirs')}</button>
      </span>`
    }
    <button type="button" class="link entry-history" tabindex="-1" aria-label=${t('History of {cell}', { cell: label })} onClick=${onHistory}>${t('History')}</button>
  </td>`
}

/** Who changed a value, when, from what to what, and through what (the API, an upload, a job), newest first. */
export function CellHistory({ cell, format, users, onClose }) {
  const keyField = cell.campaign_id != null ? { campaign_id: cell.campaign_id } : { data_date: cell.data_date }
  const path = `/datapoint_history/${query({ location_id: cell.location_id, indicator_id: cell.indicator_id, ...keyField, limit: 0 })}`
  const { value: rows, error: failed } = useRead(() => list(path).then((found) => [...found].sort((a, b) => b.id - a.id)), [cell.key], null)
  const error = failed?.message ?? ''
  const uploads = useUploadNames(rows)
  const via = { api: t('entered'), job: t('a background job'), cli: t('the command line'), demo: t('the demo data'), sql: t('the database directly') }
  /** Through what a value changed, in words: the demo data, an upload by its file's name (its page a click away), typed in. */
  const through = (r) => {
    // The demo's values are stored as a data entry document: its number would mean nothing to anyone.
    if (r.document_id == null || r.via === 'api' || r.via === 'demo' || r.via === 'sql') return via[r.via] ?? r.via
    const title = uploads.get(r.document_id)
    return html`<a href=${`#/upload/${r.document_id}`}>${title ? t('upload of {file}', { file: fileNameOf(title) }) : t('an upload (document {id})', { id: r.document_id })}</a>`
  }
  // Opened below the grid, often out of sight on a phone: brought into view, and the focus on its heading;
  // brought up again once its rows are read (before, the page ended at its heading, which stayed at the
  // window's bottom edge with its rows below).
  const heading = useRef(null)
  useEffect(() => {
    heading.current?.focus({ preventScroll: true })
  }, [cell.key])
  useEffect(() => {
    heading.current?.closest('section')?.scrollIntoView({ block: 'start' })
  }, [cell.key, rows])
  return html`<section class="entry-history-panel" aria-labelledby="history-heading">
    <h2 id="history-heading" tabindex="-1" ref=${heading}>${t('History of {cell}', { cell: cell.label })}</h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${rows && !rows.length && html`<p>${t('No change recorded yet.')}</p>`}
    ${
      rows?.length > 0 &&
      html`<div class="table-scroll"><table class="stacked">
        <thead><tr><th scope="col">${t('When')}</th><th scope="col">${t('Who')}</th><th scope="col">${t('Before')}</th><th scope="col">${t('After')}</th><th scope="col">${t('Through')}</th></tr></thead>
        <tbody>${rows.map(
          (r) => html`<tr key=${r.id}>
            <td data-label=${t('When')}>${formatTime(r.changed_at)}</td>
            <td data-label=${t('Who')}>${r.user_id == null ? '–' : (users.get(r.user_id) ?? t('user {id}', { id: r.user_id }))}</td>
            <td class="number" data-label=${t('Before')}>${formatValue(r.value_before, format)}</td>
            <td class="number" data-label=${t('After')}>${formatValue(r.value_after, format)}</td>
            <td data-label=${t('Through')}>${through(r)}</td>
          </tr>`,
        )}</tbody>
      </table></div>`
    }
    <${ValueFollowups} cell=${cell} users=${users} />
    <button type="button" class="secondary" onClick=${onClose}>${t('Close history')}</button>
  </section>`
}

/** The file names of the uploads that changed a cell (those the reader may see), by document id. */
function useUploadNames(rows) {
  const ids = [...new Set((rows ?? []).filter((r) => r.via === 'job' || r.via === 'cli').map((r) => r.document_id))].filter((id) => id != null)
  const read = () =>
    ids.length
      ? list(`/document/${query({ id__in: ids, fields: 'id,doc_title', limit: 0 })}`).then(
          (docs) => new Map(docs.map((d) => [d.id, d.doc_title])),
          () => new Map(),
        )
      : undefined
  return useRead(read, [ids.join(',')], new Map()).value
}
