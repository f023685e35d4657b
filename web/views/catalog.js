// The catalog managed in the app by metadata editors and superusers, every change through the public
// API with its rules (a component cycle or a class indicator in a calculation is refused with the API's
// message): indicators with their tags, calculated components, class labels and bounds; campaigns and
// campaign types; locations (parent, type, code, a GeoJSON polygon) and location types; validation
// rules; and, for
// superusers, users' groups.
import { useState } from 'preact/hooks'
import { change } from '../api.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { ActionMessage, useRows, useSectionMessage } from './actions.js'
import { IndicatorBounds } from './bounds.js'
import { CatalogGroups } from './catalog-groups.js'
import { CreateForm, DeleteButton, EditButton } from './catalog-parts.js'
import { CatalogRules } from './catalog-rules.js'
import { ClassLabels } from './class-labels.js'
import { LocationSearch } from './location-search.js'

/** Data formats and calculations in words; the API's code (what an API user writes) in the title. */
const FORMATS = {
  int: () => t('Count'),
  pct: () => t('Percent'),
  bool: () => t('Yes or no'),
  class: () => t('Class'),
  date_int: () => t('Count by date'),
}
const CALCULATIONS = {
  PART_TO_BE_SUMMED: () => t('Part summed'),
  NUMERATOR: () => t('Numerator'),
  DENOMINATOR: () => t('Denominator'),
  WHOLE_OF_DIFFERENCE: () => t('Whole of a difference'),
  PART_OF_DIFFERENCE: () => t('Part of a difference'),
}
const inWords = (words, code) => (words[code] ? words[code]() : code)
const choices = (words) => Object.keys(words).map((code) => html`<option key=${code} value=${code} title=${code}>${inWords(words, code)}</option>`)
/** @type {Array<[string, () => string]>} */
const SECTIONS = [
  ['indicators', () => t('Indicators')],
  ['campaigns', () => t('Campaigns')],
  ['locations', () => t('Locations')],
  ['rules', () => t('Validation rules')],
  ['groups', () => t('Users’ groups')],
]

const options = (rows, label = (r) => r.name) => rows.map((r) => html`<option key=${r.id} value=${r.id}>${label(r)}</option>`)

function Indicators({ catalog, user, done, say, version }) {
  const components = useRows('/calculated_indicator_component/?limit=0', version, (e) => say({ text: e.message, error: true }))
  const tags = useRows('/indicator_tag/?limit=0', version, (e) => say({ text: e.message, error: true }))
  const name = (id) => catalog.indicatorName.get(id) ?? String(id)
  return html`<h2>${t('New indicator')}</h2>
    <${CreateForm} resource="indicator" submit=${t('Create indicator')} onCreated=${() => done(t('Indicator created'))} onMessage=${say}
      fields=${[['name'], ['short_name'], ['data_format'], ['resource_name'], ['good_bound', 'number'], ['bad_bound', 'number']]}>
      <label>${t('Name')} <input name="name" required maxlength="255" /></label>
      <label>${t('Short name')} <input name="short_name" required maxlength="255" /></label>
      <label>${t('Data format')} <select name="data_format">${choices(FORMATS)}</select></label>
      <label>${t('Values of')} <select name="resource_name"><option value="campaign">${t('Campaigns')}</option><option value="date">${t('Dates')}</option></select></label>
      <label>${t('Good bound')} <input name="good_bound" inputmode="decimal" /></label>
      <label>${t('Bad bound')} <input name="bad_bound" inputmode="decimal" /></label>
    <//>
    <h2>${t('Calculated indicators')}</h2>
    <p class="hint">${t('A calculated indicator is made of components: parts summed, a numerator over a denominator, or a part of a difference.')}</p>
    <ul class="cards">${components.map(
      (
        c,
      ) => html`<li key=${c.id} class="chart-item"><span>${name(c.indicator_id)} ← ${name(c.indicator_component_id)} (${inWords(CALCULATIONS, c.calculation)})</span>
        <${DeleteButton} resource="calculated_indicator_component" row=${c} name=${t('component {id}', { id: c.id })} user=${user} onDeleted=${() => done('')} onMessage=${say} /></li>`,
    )}</ul>
    <${CreateForm} resource="calculated_indicator_component" submit=${t('Add component')} onCreated=${() => done(t('Component added'))} onMessage=${say}
      fields=${[['indicator_id', 'number'], ['indicator_component_id', 'number'], ['calculation']]}>
      <label>${t('Calculated indicator')} <select name="indicator_id">${options(catalog.indicators, (i) => i.short_name)}</select></label>
      <label>${t('Component')} <select name="indicator_component_id">${options(catalog.indicators, (i) => i.short_name)}</select></label>
      <label>${t('Calculation')} <select name="calculation">${choices(CALCULATIONS)}</select></label>
    <//>
    <h2>${t('Tags')}</h2>
    <${CreateForm} resource="indicator_to_tag" submit=${t('Tag indicator')} onCreated=${() => done(t('Indicator tagged'))} onMessage=${say}
      fields=${[['indicator_id', 'number'], ['indicator_tag_id', 'number']]}>
      <label>${t('Indicator')} <select name="indicator_id">${options(catalog.indicators, (i) => i.short_name)}</select></label>
      <label>${t('Tag')} <select name="indicator_tag_id">${options(tags, (g) => g.tag_name)}</select></label>
    <//>
    <${ClassLabels} key=${catalog.indicators.length} catalog=${catalog} />
    <${IndicatorBounds} key=${`b${catalog.indicators.length}`} catalog=${catalog} onChange=${() => done('')} />
    <h2>${t('Indicators')}</h2>
    <ul class="cards">${catalog.indicators.map(
      (
        i,
      ) => html`<li key=${i.id} class="chart-item"><span title=${i.name}>${i.short_name} (<span title=${i.data_format}>${inWords(FORMATS, i.data_format)}</span>)</span>
        <span class="actions"><${EditButton} resource="indicator" row=${i} name=${i.short_name} fields=${[
          { field: 'name', label: t('Name') },
          { field: 'short_name', label: t('Short name') },
        ]} onSaved=${done} onMessage=${say} />
        <${DeleteButton} resource="indicator" row=${i} name=${i.short_name} user=${user} onDeleted=${() => done('')} onMessage=${say} /></span></li>`,
    )}</ul>`
}

function Campaigns({ catalog, user, done, say }) {
  const types = [...catalog.campaignTypeName].map(([id, name]) => ({ id, name }))
  return html`<h2>${t('New campaign')}</h2>
    <${CreateForm} resource="campaign" submit=${t('Create campaign')} onCreated=${() => done(t('Campaign created'))} onMessage=${say}
      fields=${[['name'], ['campaign_type_id', 'number'], ['start_date'], ['end_date']]}>
      <label>${t('Name')} <input name="name" required maxlength="255" /></label>
      <label>${t('Campaign type')} <select name="campaign_type_id">${options(types)}</select></label>
      <label>${t('Start')} <input name="start_date" type="date" required /></label>
      <label>${t('End')} <input name="end_date" type="date" required /></label>
    <//>
    <h2>${t('New campaign type')}</h2>
    <${CreateForm} resource="campaign_type" submit=${t('Create campaign type')} onCreated=${() => done(t('Campaign type created'))} onMessage=${say} fields=${[['name']]}>
      <label>${t('Name')} <input name="name" required maxlength="255" /></label>
    <//>
    <h2>${t('Campaigns')}</h2>
    <ul class="cards">${catalog.campaigns.map(
      (c) => html`<li key=${c.id} class="chart-item"><span>${c.name} <span class="nowrap">(${c.start_date} – ${c.end_date})</span></span>
        <span class="actions"><${EditButton} resource="campaign" row=${c} name=${c.name} fields=${[
          { field: 'name', label: t('Name') },
          { field: 'start_date', label: t('Start'), type: 'date' },
          { field: 'end_date', label: t('End'), type: 'date' },
        ]} onSaved=${done} onMessage=${say} />
        <${DeleteButton} resource="campaign" row=${c} name=${c.name} user=${user} onDeleted=${() => done('')} onMessage=${say} /></span></li>`,
    )}</ul>
    <h2>${t('Campaign types')}</h2>
    <ul class="cards">${types.map(
      (c) => html`<li key=${c.id} class="chart-item"><span>${c.name}</span>
        <span class="actions"><${EditButton} resource="campaign_type" row=${c} name=${c.name} fields=${[{ field: 'name', label: t('Name') }]} onSaved=${done} onMessage=${say} />
        <${DeleteButton} resource="campaign_type" row=${c} name=${c.name} user=${user} onDeleted=${() => done('')} onMessage=${say} /></span></li>`,
    )}</ul>`
}

function Locations({ catalog, user, done, say }) {
  const [parentId, setParentId] = useState(null)
  const [chosen, setChosen] = useState(null)
  /** A GeoJSON file (a Feature, a FeatureCollection's first feature, or a geometry) as the location's shape. */
  const uploadShape = async (event) => {
    event.preventDefault()
    const file = new FormData(event.target).get('shape')
    try {
      const geo = JSON.parse(await /** @type {File} */ (file).text())
      const shape = geo.type === 'FeatureCollection' ? geo.features[0] : geo
      await change('POST', '/geo/', { location_id: chosen, geo_json: shape })
      event.target.reset()
      done(t('Shape saved'))
    } catch (e) {
      say({ text: e instanceof SyntaxError ? t('Not a GeoJSON file') : e.message, error: true })
    }
  }
  const location = catalog.locations.find((l) => l.id === chosen)
  return html`<h2>${t('New location')}</h2>
    <${CreateForm} resource="location" submit=${t('Create location')} onCreated=${(row) => (setChosen(row.id), done(t('Location created')))} onMessage=${say}
      fields=${[['name'], ['location_code'], ['location_type_id', 'number'], ['parent_location_id', 'number']]}>
      <label>${t('Name')} <input name="name" required maxlength="255" /></label>
      <label>${t('Code')} <input name="location_code" required maxlength="255" /></label>
      <label>${t('Location type')} <select name="location_type_id">${options(catalog.types)}</select></label>
      <${LocationSearch} catalog=${catalog} label=${t('Parent')} locationId=${parentId} onChange=${setParentId} allowNone=${true} noneLabel=${t('None (a root)')} />
      <input type="hidden" name="parent_location_id" value=${parentId ?? ''} />
    <//>
    <h2>${t('A location’s name, code, shape and deletion')}</h2>
    <${LocationSearch} catalog=${catalog} label=${t('Location to change')} locationId=${chosen} onChange=${setChosen} />
    ${
      location &&
      html`<form class="inline" onSubmit=${uploadShape}>
          <label>${t('Polygon (GeoJSON file)')} <input name="shape" type="file" accept=".geojson,.json,application/geo+json,application/json" required /></label>
          <button type="submit">${t('Upload shape')}</button>
        </form>
        <${EditButton} key=${location.id} resource="location" row=${location} name=${location.name} fields=${[
          { field: 'name', label: t('Name') },
          { field: 'location_code', label: t('Code') },
        ]} onSaved=${done} onMessage=${say} />
        <${DeleteButton} resource="location" row=${location} name=${location.name} user=${user} onDeleted=${() => (setChosen(null), done(''))} onMessage=${say} />`
    }
    <h2>${t('New location type')}</h2>
    <${CreateForm} resource="location_type" submit=${t('Create location type')} onCreated=${() => done(t('Location type created'))} onMessage=${say}
      fields=${[['name'], ['admin_level', 'number']]}>
      <label>${t('Name')} <input name="name" required maxlength="55" /></label>
      <label>${t('Administrative level')} <input name="admin_level" type="number" min="0" required /></label>
    <//>
    <h2>${t('Location types')}</h2>
    <ul class="cards">${catalog.types.map(
      (l) => html`<li key=${l.id} class="chart-item"><span>${l.name} (${l.admin_level})</span>
        <span class="actions"><${EditButton} resource="location_type" row=${l} name=${l.name} fields=${[{ field: 'name', label: t('Name') }]} onSaved=${done} onMessage=${say} />
        <${DeleteButton} resource="location_type" row=${l} name=${l.name} user=${user} onDeleted=${() => done('')} onMessage=${say} /></span></li>`,
    )}</ul>`
}

export function Catalog({ catalog, user, section = 'indicators', onCatalogChange }) {
  const [message, setMessage] = useSectionMessage()
  const [version, setVersion] = useState(0)
  const done = async (text) => {
    await onCatalogChange()
    setVersion((v) => v + 1)
    if (text) setMessage({ text, error: false })
  }
  const shown = SECTIONS.filter(([name]) => name !== 'groups' || user.is_superuser)
  const current = shown.some(([name]) => name === section) ? section : 'indicators'
  const props = { catalog, user, done, say: setMessage, version }
  return html`<section class="catalog">
    <h1>${t('Catalog')}</h1>
    <nav aria-label=${t('Catalog sections')} class="actions">${shown.map(
      ([name, label]) => html`<a key=${name} href=${`#/catalog/${name}`} aria-current=${name === current ? 'page' : undefined}>${label()}</a>`,
    )}</nav>
    <${ActionMessage} message=${message} />
    ${current === 'indicators' && html`<${Indicators} ...${props} />`}
    ${current === 'campaigns' && html`<${Campaigns} ...${props} />`}
    ${current === 'locations' && html`<${Locations} ...${props} />`}
    ${current === 'rules' && html`<${CatalogRules} ...${props} />`}
    ${current === 'groups' && html`<${CatalogGroups} ...${props} />`}
  </section>`
}
