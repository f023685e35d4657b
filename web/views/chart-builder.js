// The chart builder: type, indicators, campaigns or dates, location and depth, grouping; a live
// preview; saved through the API as `chart_json` in the original front-end's shape. Opened from the
// dashboard editor, it hands the chart back to the editor's draft. Who may not change a chart saves a
// copy of it instead.
import { useEffect, useMemo, useState } from 'preact/hooks'
import { change, freeTitle, mayChange } from '../api.js'
import { chartSpec, chartTypes, DATE_GROUPINGS, drawsOneKey, isRelative, isTimeChart } from '../chart-data.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { loadDraft, saveDraft } from '../drafts.js'
import { ChartCard } from './chart-card.js'
import { addToDraft } from './dashboard-editor.js'
import { Checkboxes, LocationPicker } from './fields.js'

const NO_VIEW = { campaignId: null, locationId: null }

/** The builder's chart types, in the registry's order (web/charts/types.js), as people name them. */
export const typeChoices = () => chartTypes().map((type) => ({ value: type.type, label: type.label() }))

/** A first indicator worth charting: a count or a rate of campaign data, not a yes/no flag. */
export const firstIndicator = (catalog) =>
  catalog.campaignIndicators.find((i) => i.data_format === 'int' || i.data_format === 'pct') ?? catalog.campaignIndicators[0] ?? catalog.indicators[0]

const blankChart = (catalog) => ({
  type: 'ColumnChart',
  indicator_ids: [firstIndicator(catalog)?.id].filter((id) => id !== undefined),
  campaign_ids: catalog.campaigns.slice(-1).map((c) => c.id),
  location_ids: catalog.roots.slice(0, 1).map((l) => l.id),
  location_depth: 1,
  groupBy: 'indicator',
})

export function ChartBuilder({ chartId, dashboardId, catalog, user, navigate }) {
  const [title, setTitle] = useState('')
  const [spec, setSpec] = useState(/** @type {Record<string, any> | null} */ (chartId ? null : blankChart(catalog)))
  const [saved, setSaved] = useState(null)
  const [error, setError] = useState({ text: '', freeTitle: '' })
  useEffect(() => {
    if (!chartId) return
    change('GET', `/custom_chart/${chartId}/`).then(
      (c) => {
        setSaved(c)
        setTitle(c.title)
        setSpec(chartSpec(c.chart_json))
      },
      (e) => setError({ text: e.message, freeTitle: '' }),
    )
  }, [chartId])
  const preview = useMemo(() => spec && { uuid: 'preview', title: title || t('Preview'), chart_json: spec }, [spec, title])
  if (!spec) return error.text ? html`<p class="error" role="alert">${error.text}</p>` : html`<p>${t('Loading…')}</p>`

  const set = (patch) => setSpec({ ...spec, ...patch })
  // A pie or a map draws one indicator and one campaign: choosing another replaces the one chosen.
  const single = drawsOneKey(spec)
  const oneOf = (ids) => (single ? ids.slice(-1) : ids)
  const setType = (type) =>
    drawsOneKey({ type })
      ? set({ type, indicator_ids: (spec.indicator_ids ?? []).slice(0, 1), campaign_ids: (spec.campaign_ids ?? []).slice(-1) })
      : set({ type })
  const overTime = isTimeChart(spec)
  const own = !saved || mayChange(user, saved)
  const back = dashboardId ? `#/dashboard/${dashboardId}/edit` : '#/'
  const overDates = (dates) =>
    dates
      ? set({ campaign_ids: [], groupByTime: 'month', start_date: spec.start_date || '2016-01-01', end_date: spec.end_date || '2016-12-31' })
      : set({ campaign_ids: catalog.campaigns.slice(-1).map((c) => c.id), groupByTime: undefined, start_date: undefined, end_date: undefined })
  const ready = (spec.indicator_ids ?? []).length > 0
  const save = async (event) => {
    event.preventDefault()
    setError({ text: '', freeTitle: '' })
    if (!ready) return setError({ text: t('Choose at least one indicator.'), freeTitle: '' })
    try {
      const chart =
        own && saved
          ? await change('PATCH', `/custom_chart/${saved.id}/`, { title, chart_json: spec })
          : await change('POST', '/custom_chart/', { uuid: crypto.randomUUID(), title, chart_json: spec })
      if (dashboardId) await addToDraft(dashboardId, chart.uuid, own ? undefined : saved?.uuid)
      navigate(back)
    } catch (e) {
      if (e.code !== 'UNIQUE_VIOLATION') return setError({ text: e.message, freeTitle: '' })
      const free = await freeTitle('custom_chart', title)
      setError({ text: t('“{title}” is already the title of a chart (titles are shared by everyone). “{free}” is free.', { title, free }), freeTitle: free })
    }
  }
  const remove = async () => {
    if (!confirm(t('Delete the chart “{title}”? It leaves every dashboard that shows it.', { title: saved.title }))) return
    try {
      await change('DELETE', `/custom_chart/${saved.id}/`)
      const draft = dashboardId && loadDraft('dashboard', dashboardId)
      if (draft) saveDraft('dashboard', dashboardId, { ...draft, uuids: draft.uuids.filter((u) => u !== saved.uuid) })
      navigate(back)
    } catch (e) {
      setError({ text: e.message, freeTitle: '' })
    }
  }
  return html`<h1>${saved ? (own ? t('Edit chart') : t('Copy of a chart')) : t('New chart')}</h1>
    ${
      !own &&
      html`<p class="hint">${dashboardId ? t('This chart is someone else’s: saving makes a copy of your own, put in its place on your dashboard.') : t('This chart is someone else’s: saving makes a copy of your own.')}</p>`
    }
    <div class="builder">
      <form class="stack" onSubmit=${save}>
        <label>${t('Title')} <input value=${title} required maxlength="255" onInput=${(e) => setTitle(e.target.value)} /></label>
        <${TypeChoice} type=${spec.type} single=${single} onChange=${setType} />
        <${Checkboxes} legend=${t('Indicators')} options=${catalog.indicators.map((i) => ({ id: i.id, label: i.short_name }))} selected=${spec.indicator_ids ?? []} onChange=${(ids) => set({ indicator_ids: oneOf(ids) })} />
        <${ValuesOver} spec=${spec} catalog=${catalog} overTime=${overTime} onOver=${overDates} set=${set} oneOf=${oneOf} />
        <${LocationPicker} catalog=${catalog} locationId=${spec.location_ids?.[0]} depth=${spec.location_depth ?? 0}
          onChange=${({ locationId, depth }) => set({ location_ids: [locationId], location_depth: depth })} />
        <label class="choice"><input type="checkbox" checked=${isRelative(spec)} onChange=${(e) => set({ relative_location: e.target.checked ? 'viewer' : undefined })} /> ${t("Each reader's own location instead, at this depth below it (a provincial officer: her province's)")}</label>
        <label class="choice"><input type="checkbox" checked=${Boolean(spec.pinned)} onChange=${(e) => set({ pinned: e.target.checked || undefined })} /> ${t("On a dashboard, keep this chart's own campaigns, dates and locations")}</label>
        <label>${t('Group by')}
          <select value=${spec.groupBy ?? 'indicator'} onChange=${(e) => set({ groupBy: e.target.value })}>
            <option value="indicator">${t('Indicator')}</option><option value="location">${t('Location')}</option>
          </select>
        </label>
        <${SaveError} error=${error} onUseTitle=${(free) => (setTitle(free), setError({ text: '', freeTitle: '' }))} />
        <div class="inline">
          <button type="submit">${own ? t('Save chart') : t('Save as my chart')}</button>
          <a href=${back}>${t('Cancel')}</a>
          ${saved && own && html`<button type="button" class="danger" onClick=${remove}>${t('Delete chart')}</button>`}
        </div>
      </form>
      <section aria-label=${t('Preview')}>
        ${ready ? html`<${ChartCard} chart=${preview} view=${NO_VIEW} catalog=${catalog} />` : html`<p>${t('Choose at least one indicator to see a preview.')}</p>`}
      </section>
    </div>`
}

/** The chart type, and what the chosen one takes. */
function TypeChoice({ type, single, onChange }) {
  return html`<label>${t('Chart type')}
          <select value=${type} onChange=${(e) => onChange(e.target.value)} aria-describedby="type-takes">
            ${typeChoices().map(({ value, label }) => html`<option key=${value} value=${value}>${label}</option>`)}
          </select>
        </label>
        <p class="hint" id="type-takes">${single ? t('A pie or a map shows one indicator and one campaign: choosing another replaces the one chosen.') : t('Each indicator is a series; counts and percents get an axis each.')}</p>`
}

/** Over campaigns (which ones) or over dates (the range, and the buckets). */
function ValuesOver({ spec, catalog, overTime, onOver, set, oneOf }) {
  return html`<fieldset><legend>${t('Values over')}</legend>
          <label class="choice"><input type="radio" name="over" checked=${!overTime} onChange=${() => onOver(false)} /> ${t('Campaigns')}</label>
          <label class="choice"><input type="radio" name="over" checked=${overTime} onChange=${() => onOver(true)} /> ${t('Dates')}</label>
        </fieldset>
        ${
          overTime
            ? html`<label>${t('From')} <input type="date" value=${spec.start_date ?? ''} onInput=${(e) => set({ start_date: e.target.value })} /></label>
              <label>${t('To')} <input type="date" value=${spec.end_date ?? ''} onInput=${(e) => set({ end_date: e.target.value })} /></label>
              <label>${t('Group by time')}
                <select value=${spec.groupByTime} onChange=${(e) => set({ groupByTime: e.target.value })}>${DATE_GROUPINGS.map(([g, label]) => html`<option key=${g} value=${g}>${label()}</option>`)}</select>
              </label>`
            : html`<${Checkboxes} legend=${t('Campaigns')} options=${catalog.campaigns.map((c) => ({ id: c.id, label: c.name }))} selected=${spec.campaign_ids ?? []} onChange=${(ids) => set({ campaign_ids: oneOf(ids) })} />`
        }`
}

/** Why the chart was not saved; a title already taken comes with a free one to use instead. */
function SaveError({ error, onUseTitle }) {
  return html`${error.text && html`<p class="error" role="alert">${error.text}</p>`}
    ${error.freeTitle && html`<button type="button" class="secondary" onClick=${() => onUseTitle(error.freeTitle)}>${t('Use “{title}”', { title: error.freeTitle })}</button>`}`
}
