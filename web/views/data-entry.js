// Data entry: a campaign (or, for dated indicators, a day) and a location of the reader's own part of
// the tree → a grid of its lowest locations × the indicators, raw ones typed in, calculated ones shown
// as the server will compute them. Every value typed goes through the outbox (web/outbox.js): kept in
// IndexedDB, sent in order once the network answers, a value changed by someone else since the form
// was loaded kept as a conflict to settle. The page and its reads load from the service worker (web/sw.js).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api, list, query } from '../api.js'
import { entryColumns, entryRows, flagsOf, parseEntered } from '../entry-values.js'
import { formatValue } from '../format.js'
import { html } from '../html.js'
import { ScrollCue, useScrollCue } from './scroll-cue.js'
import { useRead } from './use-read.js'
import { t, tn } from '../i18n.js'
import { cellKey, DISCARDED, enqueue, entries, flush, forget, intoOutbox, outboxReady } from '../outbox.js'
import { CellHistory, EntryCell } from './data-entry-cell.js'
import { LocationSearch } from './location-search.js'
import { violationWords } from './value-flags.js'
import { why } from './quality-outliers.js'
import { keepForOffline } from '../offline.js'
import { routeHash } from '../route.js'
import { refusalText } from '../api-messages.js'

/** A stored value's ETag, read from its detail (null when the reader cannot read it). */
async function etagOf(resource, id) {
  const response = await fetch(detailPath(resource, id), { credentials: 'same-origin' })
  return response.ok ? response.headers.get('etag') : null
}

const detailPath = (resource, id) => `/api/v1/${resource}/${id}/`

/**
 * The stored values of a grid by cell key, with the row and ETag of each enterable one, and the API
 * paths read for them (kept for a reload without a network: web/offline.js).
 */
async function loadValues(selection, rows, columns) {
  const { resource, campaignId, dataDate } = selection
  const place = { indicator__in: columns.map((c) => c.id), location_id__in: rows.map((r) => r.id), limit: 0 }
  const read = resource === 'date_datapoint' ? { ...place, start_date: dataDate, end_date: dataDate } : { ...place, campaign__in: campaignId }
  const listPath = `/${resource}/${query(read)}`
  const res = await api('GET', listPath)
  if (res.status !== 200) throw new Error(refusalText(res.body, String(res.status)))
  const enterable = new Set(columns.filter((c) => !c.calculated).map((c) => c.id))
  const values = new Map()
  const paths = [`/api/v1${listPath}`]
  await Promise.all(
    res.body.objects.map(async (o) => {
      const key = cellKey({ resource, location_id: o.location_id, indicator_id: o.indicator_id, campaign_id: o.campaign_id, data_date: o.data_date })
      if (enterable.has(o.indicator_id)) paths.push(detailPath(resource, o.id))
      values.set(key, { value: o.value, rowId: o.id, etag: enterable.has(o.indicator_id) ? await etagOf(resource, o.id) : null })
    }),
  )
  return { values, paths }
}

/** The server's values of the calculated `columns` at one location of the selection. */
function readFinals(selection, locationId, columns) {
  const place = { indicator__in: columns.map((c) => c.id), location_id__in: locationId, limit: 0 }
  const read =
    selection.resource === 'date_datapoint'
      ? { ...place, start_date: selection.dataDate, end_date: selection.dataDate }
      : { ...place, campaign__in: selection.campaignId }
  return list(`/${selection.resource}/${query(read)}`)
}

/** The names of users for the history, when the reader may list them (superusers); else ids. */
async function userNames() {
  const res = await api('GET', '/user/?fields=id,username&limit=0')
  return new Map(res.status === 200 ? res.body.objects.map((u) => [u.id, u.username]) : [])
}

/**
 * The form's selection from the address (`#/entry?campaign=3&location=7`, or `values=date&day=…`), each
 * part checked against what the reader may see; the newest campaign and her first root by default.
 */
function selectionOf(params, catalog, campaigns) {
  const campaignId = Number(params.campaign)
  const locationId = Number(params.location)
  return {
    resource: params.values === 'date' ? 'date_datapoint' : 'campaign_datapoint',
    campaignId: campaigns.some((c) => c.id === campaignId) ? campaignId : campaigns[0]?.id,
    dataDate: /^\d{4}-\d{2}-\d{2}$/.test(params.day ?? '') ? params.day : '',
    locationId: catalog.locationName.has(locationId) ? locationId : catalog.roots[0]?.id,
  }
}

/** The address of a selection: a reload (even offline, from the service worker) comes back to it. */
const addressOf = (selection) =>
  routeHash('#/entry', {
    values: selection.resource === 'date_datapoint' ? 'date' : undefined,
    campaign: selection.resource === 'date_datapoint' ? undefined : selection.campaignId,
    day: selection.resource === 'date_datapoint' ? selection.dataDate : undefined,
    location: selection.locationId,
  })

/** A selection changed on the page, written into the address in place (no new history entry, no navigation). */
function useSelectionInAddress(selection, selectionKey) {
  const chosen = useRef(false)
  useEffect(() => {
    if (chosen.current) window.history.replaceState(window.history.state, '', addressOf(selection))
    chosen.current = true
  }, [selectionKey])
}

export function DataEntry({ catalog, params = {} }) {
  const campaigns = [...catalog.campaigns].reverse()
  const [selection, setSelection] = useState(() => selectionOf(params, catalog, campaigns))
  const { value: components, error: noComponents } = useRead(() => list('/calculated_indicator_component/?limit=0'), [], null)
  const [values, setValues] = useState(null)
  // The selection the values were read for: a grid is shown only under its own campaign or day, never
  // for a moment under the next one's name (a value typed there would be saved to the new selection).
  const [valuesFor, setValuesFor] = useState(null)
  const selectionKey = JSON.stringify([selection.resource, selection.campaignId, selection.dataDate, selection.locationId])
  const current = valuesFor === selectionKey ? values : null
  const drafts = useDrafts()
  const [states, setStates] = useState(new Map())
  const [history, setHistory] = useState(null)
  const users = useRead(userNames, [], new Map()).value
  const [valuesError, setError] = useState('')
  const error = noComponents?.message ?? valuesError
  // Whether the service worker holds what a reload without a network needs (the page says so to a test, on its section).
  const [offlineReady, setOfflineReady] = useState(false)
  const grid = useRef(null)
  const over = selection.resource === 'date_datapoint' ? 'date' : 'campaign'
  const columns = useMemo(() => (components ? entryColumns(catalog.indicators, components, over) : []), [components, over])
  const rows = useMemo(() => (selection.locationId == null ? [] : entryRows(catalog, selection.locationId)), [selection.locationId])
  const keyOf = (locationId, indicatorId) =>
    cellKey({
      resource: selection.resource,
      location_id: locationId,
      indicator_id: indicatorId,
      campaign_id: over === 'campaign' ? selection.campaignId : null,
      data_date: selection.dataDate,
    })
  const setState = stateSetter(setStates)

  const { waiting: kept, showOutbox, send } = useOutbox({ selection, keyOf, columns, setValues, setStates, catalog })
  const { waiting, notSaved } = unsentCounts(kept, states, rows, columns, keyOf)
  useEffect(() => {
    if (!components || !rows.length || (over === 'date' ? !selection.dataDate : !selection.campaignId)) return setValues(null)
    let latest = true
    setValues(null)
    drafts.clear()
    setStates(new Map())
    loadValues(selection, rows, columns).then(
      ({ values: loaded, paths }) => {
        if (!latest) return
        setValues(loaded)
        setValuesFor(selectionKey)
        setError('')
        showOutbox()
        keepForOffline(paths).then((ready) => latest && setOfflineReady(ready))
      },
      (e) => latest && setError(e.message),
    )
    return () => {
      latest = false
    }
  }, [selectionKey, components])
  useSelectionInAddress(selection, selectionKey)

  const outliers = useOutlierWarnings(selection, over, current, keyOf, rows, columns)
  const { commit, keepMine, takeTheirs } = cellWrites({ selection, over, rows, columns, keyOf, states, values, setValues, setState, showOutbox, send })
  const unsent = (row) => hasUnsentValues(row, columns, keyOf, { drafts: drafts.texts, states })
  /** A cell to type in: its value, state, and what typing, a conflict or its history does. */
  const cellOf = (row, c, rowIndex, columnIndex) => {
    const key = keyOf(row.id, c.id)
    const state = states.get(key)
    const label = t('{indicator} at {location}', { indicator: c.short_name, location: row.name })
    return html`<${EntryCell}
      key=${c.id}
      id=${`cell-${row.id}-${c.id}`}
      label=${label}
      format=${c.data_format}
      value=${state?.value ?? values.get(key)?.value}
      state=${state}
      unusual=${outliers.has(key) ? why(outliers.get(key), c.data_format) : undefined}
      onDraft=${(text) => drafts.set(key, text)}
      onCommit=${(text) => {
        drafts.forget(key)
        commit(row, c, text)
      }}
      onEnter=${() => focusBelow(grid.current, rowIndex, columnIndex)}
      onKeepMine=${() => keepMine(row, c)}
      onTakeTheirs=${() => takeTheirs(row, c)}
      onHistory=${() => setHistory({ key, label, location_id: row.id, indicator_id: c.id, campaign_id: over === 'campaign' ? selection.campaignId : null, data_date: selection.dataDate, format: c.data_format })}
      columnIndex=${columnIndex}
    />`
  }
  return html`<section class="data-entry" data-offline-ready=${offlineReady ? 'true' : undefined}>
    <h1>${t('Data entry')}</h1>
    <${EntryControls} selection=${selection} over=${over} campaigns=${campaigns} catalog=${catalog} set=${(patch) => setSelection({ ...selection, ...patch })} />
    <${OfflineNotice} />
    <p class="entry-waiting" role="status">${sendingWords(waiting, notSaved)}</p>
    <p class="hint">${t('Type a value and press Enter or Tab: it is saved, and kept in this browser until the server has it. Calculated indicators show the server’s values, once it has the line’s.')} ${t('Alt+H opens the history of the cell you are in.')}</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${!current && !error && html`<p>${t('Loading…')}</p>`}
    ${
      current &&
      html`<${EntryGrid} grid=${grid} rows=${rows} columns=${columns} components=${components} values=${current} keyOf=${keyOf} unsent=${unsent} cellOf=${cellOf} />`
    }
    ${history && html`<${CellHistory} cell=${history} format=${history.format} users=${users} onClose=${() => closeHistory(history, setHistory)} />`}
  </section>`
}

/**
 * The campaign's outliers among the grid's values (the API's campaign_outlier, under the grid's
 * location), by cell key: read with the grid's values and again when a typed value the server has
 * changes (not when the server's calculated values are read back after it), so a value typed far from
 * what its place usually reports says so at once. Dated values have none.
 */
function useOutlierWarnings(selection, over, values, keyOf, rows, columns) {
  const path =
    over === 'campaign' && selection.campaignId && selection.locationId != null
      ? `/campaign_outlier/${query({ campaign_id: selection.campaignId, location_id: selection.locationId, limit: 0 })}`
      : null
  const entered = columns.filter((c) => !c.calculated)
  const typed = values && rows.flatMap((row) => entered.map((c) => values.get(keyOf(row.id, c.id))?.value ?? '')).join(';')
  const { value: found } = useRead(() => (path && typed !== null ? list(path) : Promise.resolve([])), [path, typed], [])
  return useMemo(() => new Map(found.map((o) => [keyOf(o.location.id, o.indicator.id), o])), [found])
}

/** Sets a cell's state; none (undefined) when it has nothing to say. */
const stateSetter = (setStates) => (key, state) =>
  setStates((before) => {
    const next = new Map(before)
    if (state) next.set(key, state)
    else next.delete(key)
    return next
  })

/** The states of a cell that an outbox entry holds: gone with the entry when it is discarded. */
const OUTBOX_STATES = new Set(['saving', 'waiting', 'refused', 'conflict'])

/** The states of a cell whose value is not saved until its reader settles it. */
const NOT_SAVED = new Set(['invalid', 'refused', 'conflict'])

/**
 * What waits: what the outbox keeps (`kept`), or more while a value just typed is on its way into it;
 * and the grid's cells whose value the server does not hold (refused, in conflict, or not a value at all).
 */
function unsentCounts(kept, states, rows, columns, keyOf) {
  const waiting = Math.max(kept, [...states.values()].filter((s) => s.state === 'saving' || s.state === 'waiting').length)
  const notSaved = rows.flatMap((row) => columns.filter((c) => !c.calculated && NOT_SAVED.has(states.get(keyOf(row.id, c.id))?.state))).length
  return { waiting, notSaved }
}

/** What waits to be sent and what was not saved, in words: "every value is sent" only when both are none. */
export function sendingWords(waiting, notSaved) {
  const words = [
    waiting > 0 && tn(waiting, '{n} value waits to be sent', '{n} values wait to be sent'),
    notSaved > 0 && tn(notSaved, '{n} value was not saved: its cell says why', '{n} values were not saved: their cells say why'),
  ].filter(Boolean)
  return words.length ? words.join('. ') : t('Every value is sent')
}

/** What the form is of: a campaign or a day, and where. */
function EntryControls({ selection, over, campaigns, catalog, set }) {
  return html`<div class="controls">
      <label>${t('Values of')}
        <select value=${selection.resource} onChange=${(e) => set({ resource: e.target.value })}>
          <option value="campaign_datapoint">${t('A campaign')}</option>
          <option value="date_datapoint">${t('A day (dated indicators)')}</option>
        </select>
      </label>
      ${
        over === 'campaign'
          ? html`<label>${t('Campaign')}
              <select value=${selection.campaignId} onChange=${(e) => set({ campaignId: Number(e.target.value) })}>
                ${campaigns.map((c) => html`<option key=${c.id} value=${c.id}>${c.name}</option>`)}
              </select>
            </label>`
          : html`<label>${t('Day')} <input type="date" value=${selection.dataDate} onChange=${(e) => set({ dataDate: e.target.value })} /></label>`
      }
      <${LocationSearch} catalog=${catalog} label=${t('Location')} locationId=${selection.locationId} onChange=${(id) => set({ locationId: id })} />
    </div>`
}

/**
 * The grid: a line per location, a column per indicator; `cellOf` draws a cell to type in. Calculated
 * indicators show the server's value (the engine computes them, and a location may hold its own value
 * of one), read again after each save; while a line has values the server does not have yet (typed,
 * being sent, waiting for a network), its calculated cells say so instead of guessing.
 */
function EntryGrid({ grid, rows, columns, values, keyOf, unsent, cellOf }) {
  // On a phone two columns show: the rest are said to be there.
  const [, more] = useScrollCue(grid)
  return html`<${ScrollCue} more=${more} /><div class="table-scroll" ref=${grid}><table class="entry-grid">
        <caption class="visually-hidden">${t('Values to enter')}</caption>
        <thead><tr><th scope="col">${t('Location')}</th>${columns.map((c) => html`<th scope="col" key=${c.id}>${c.short_name}${c.calculated ? html` <span class="calculated-mark">(${t('calculated')})</span>` : ''}</th>`)}</tr></thead>
        <tbody>${rows.map((row, rowIndex) => {
          const pending = unsent(row)
          return html`<tr key=${row.id}>
            <th scope="row">${row.name}</th>
            ${columns.map((c, columnIndex) => {
              if (!c.calculated) return cellOf(row, c, rowIndex, columnIndex)
              const cell = `${row.name}/${c.short_name}`
              if (pending) {
                return html`<td key=${c.id} class="number calculated pending" data-cell=${cell} title=${t('Calculated by the server once the values of this line are sent')}>…</td>`
              }
              return html`<td key=${c.id} class="number calculated" data-cell=${cell}>${formatValue(values.get(keyOf(row.id, c.id))?.value, c.data_format)}</td>`
            })}
          </tr>`
        })}</tbody>
      </table></div>`
}

/**
 * The outbox (web/outbox.js) as the form sees it: how many values wait, its entries shown as cell
 * states (a reload shows what still waits, and the conflicts), and `send`, made now, after a save,
 * every 4 s and when the browser is online again; an answer updates its cell (its value, and the
 * validation flags of its row).
 */
function useOutbox({ selection, keyOf, columns, setValues, setStates, catalog }) {
  const [waiting, setWaiting] = useState(0)
  const showOutbox = async () => {
    const kept = await entries()
    setWaiting(kept.filter((e) => e.state === 'waiting').length)
    setStates((before) => {
      const next = new Map(before)
      for (const e of kept) next.set(cellKey(e), { state: e.state, message: e.message, current: e.current, currentEtag: e.current_etag, value: e.value })
      return next
    })
  }
  const onAnswer = (entry, status, body, etag) => {
    const key = cellKey(entry)
    if (status < 300) {
      // The line's calculated values are the server's, read again now that it has this one (blank meanwhile, never stale).
      const calculated = columns.filter((c) => c.calculated)
      const calculatedKeys = calculated.map((c) => keyOf(entry.location_id, c.id))
      setValues((before) => {
        const next = new Map(before).set(key, { value: body.value, rowId: body.id, etag })
        if (key === keyOf(entry.location_id, entry.indicator_id)) for (const k of calculatedKeys) next.delete(k)
        return next
      })
      if (calculated.length && key === keyOf(entry.location_id, entry.indicator_id)) {
        readFinals(selection, entry.location_id, calculated).then(
          (finals) =>
            setValues((before) => {
              const next = new Map(before)
              for (const o of finals) next.set(keyOf(o.location_id, o.indicator_id), { value: o.value, rowId: o.id, etag: null })
              return next
            }),
          () => {},
        )
      }
      // A write's validation covers its location and campaign: every cell of that row of the form shown gets
      // its flags, each the rule and both numbers in words.
      const flagWords = (indicatorId) => flagsOf(body.validation, indicatorId, entry.location_id).map((v) => violationWords(v, catalog))
      setStates((before) => {
        const next = new Map(before).set(key, { state: 'saved', flags: flagWords(entry.indicator_id) })
        if (key !== keyOf(entry.location_id, entry.indicator_id)) return next
        for (const c of columns) {
          const other = keyOf(entry.location_id, c.id)
          const flags = flagWords(c.id)
          if (other !== key && (next.get(other)?.state === 'saved' || flags.length)) next.set(other, { ...(next.get(other) ?? { state: 'saved' }), flags })
        }
        return next
      })
    }
    showOutbox()
  }
  // The sends the timer and the browser's online event start answer to this render's form, not the first one's.
  const answer = useRef(onAnswer)
  answer.current = onAnswer
  const send = () => flush((...args) => answer.current(...args)).then(showOutbox)

  // Values discarded at a sign-out that then could not happen: their cells show the server's values again.
  const afterDiscard = async () => {
    const kept = new Set((await entries()).map(cellKey))
    setStates((before) => new Map([...before].filter(([key, s]) => kept.has(key) || !OUTBOX_STATES.has(s.state))))
    showOutbox()
  }
  useEffect(() => {
    send()
    const again = setInterval(send, 4000)
    addEventListener('online', send)
    addEventListener(DISCARDED, afterDiscard)
    return () => {
      clearInterval(again)
      removeEventListener('online', send)
      removeEventListener(DISCARDED, afterDiscard)
    }
  }, [])
  return { waiting, showOutbox, send }
}

/**
 * "You are offline", while the browser says it has no network (its online and offline events): the
 * count of waiting values alone does not say why they wait. A live region, so that it is also heard.
 */
function OfflineNotice() {
  const [online, setOnline] = useState(navigator.onLine)
  useEffect(() => {
    const follow = () => setOnline(navigator.onLine)
    addEventListener('online', follow)
    addEventListener('offline', follow)
    return () => {
      removeEventListener('online', follow)
      removeEventListener('offline', follow)
    }
  }, [])
  return html`<div role="status" class="offline-status">${!online && html`<p class="offline-notice">${t('You are offline: the values you type are kept in this browser and sent once the network is back.')}</p>`}</div>`
}

/** What is typed in cells and not yet committed (left or entered), by cell key. */
function useDrafts() {
  const [texts, setTexts] = useState(new Map())
  return {
    texts,
    set: (key, text) => setTexts((before) => new Map(before).set(key, text)),
    forget: (key) =>
      setTexts((before) => {
        const next = new Map(before)
        next.delete(key)
        return next
      }),
    clear: () => setTexts(new Map()),
  }
}

/** Whether a line has values the server does not have yet: typed in a cell, being sent, or waiting. */
function hasUnsentValues(row, columns, keyOf, { drafts, states }) {
  return columns.some((c) => {
    if (c.calculated) return false
    const key = keyOf(row.id, c.id)
    const state = states.get(key)?.state
    return drafts.has(key) || state === 'saving' || state === 'waiting'
  })
}

/** The history closed, the focus back in the cell it was opened from (the focus was moved to the panel). */
function closeHistory(history, setHistory) {
  setHistory(null)
  document.getElementById(`cell-${history.location_id}-${history.indicator_id}`)?.focus()
}

/** Enter moves to the cell below, and from the last line to the next column's first. */
function focusBelow(grid, rowIndex, columnIndex) {
  const inputs = grid?.querySelectorAll(`.entry-value[data-column="${columnIndex}"]`)
  const next = inputs?.[rowIndex + 1] ?? grid?.querySelector(`.entry-value[data-column="${columnIndex + 1}"]`)
  next?.focus()
}

/**
 * A cell's writes: a value typed and committed (checked, then queued in the outbox), and a conflict
 * settled for one's own value (sent again over the version there now) or for the one there.
 */
function cellWrites({ selection, over, rows, columns, keyOf, states, values, setValues, setState, showOutbox, send }) {
  const commit = (row, column, text) => {
    const key = keyOf(row.id, column.id)
    const parsed = parseEntered(text, column.data_format)
    if (parsed.error) return setState(key, { state: 'invalid', message: parsed.error })
    // A tab opened without a network holds no key to seal a value with (web/outbox.js).
    if (!outboxReady()) return setState(key, { state: 'invalid', message: t('Sign in again with a network to type values on this browser.') })
    const pending = states.get(key)
    if (parsed.value === null || parsed.value === (pending?.value ?? values.get(key)?.value)) {
      // Typed back to the value the server holds: the cell's earlier mistake is settled.
      if (pending?.state === 'invalid' && pending.value === undefined) setState(key, undefined)
      return
    }
    return save(row, column, parsed.value, values.get(key))
  }
  /** Sends `value` over the row version `over` (none: a new value); any earlier refusal or conflict of the cell is settled by it. */
  const save = async (row, column, value, base) => {
    const key = keyOf(row.id, column.id)
    // Said at once, before the outbox has it (IndexedDB answers later): the page never says every value is sent while one is not.
    setState(key, { state: navigator.onLine ? 'saving' : 'waiting', value })
    const keyFields = over === 'campaign' ? { campaign_id: selection.campaignId } : { data_date: selection.dataDate }
    const queued = await intoOutbox(async () => {
      await forget(key)
      return enqueue({
        resource: selection.resource,
        location_id: row.id,
        indicator_id: column.id,
        ...keyFields,
        value,
        row_id: base?.rowId ?? null,
        etag: base?.etag ?? null,
      })
    }).then(
      () => true,
      (error) => setState(key, { state: 'invalid', message: error.message, value }),
    )
    if (queued !== true) return
    await showOutbox()
    send()
  }
  /**
   * A conflict settled for one's own value: sent again over the version the conflict showed, not over
   * whatever is there by now (changed again since: a new conflict, showing that value, never a silent
   * overwrite of a value its reader has not seen).
   */
  const keepMine = async (row, column) => {
    const key = keyOf(row.id, column.id)
    const { value: mine, current, currentEtag } = states.get(key) ?? {}
    const { values: now } = await loadValues(selection, rows, columns)
    setValues(now)
    await save(row, column, mine, current && currentEtag ? { rowId: current.id, etag: currentEtag } : now.get(key))
  }
  /** A conflict settled for the value there: one's own forgotten, the form read again. */
  const takeTheirs = async (row, column) => {
    const key = keyOf(row.id, column.id)
    const current = states.get(key)?.current
    await forget(key)
    if (current) setValues((before) => new Map(before).set(key, { value: current.value, rowId: current.id, etag: null }))
    setValues((await loadValues(selection, rows, columns)).values)
    setState(key, { state: 'saved' })
    showOutbox()
  }
  return { commit, keepMine, takeTheirs }
}
