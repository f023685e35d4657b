// The language picker (the header, the sign-in page, a shared link's page).
import { html } from '../html.js'
import { LANGUAGES, language, pickLanguage, t } from '../i18n.js'

/** The language of the app: each named in itself; a pick is remembered in this browser (web/i18n.js). */
export function LanguagePicker() {
  return html`<label class="language"><span class="narrow-hidden">${t('Language')}</span>
    <select value=${language()} onChange=${(e) => pickLanguage(e.target.value)}>
      ${Object.entries(LANGUAGES).map(([code, name]) => html`<option key=${code} value=${code} lang=${code}>${name}</option>`)}
    </select>
  </label>`
}
