// Passwords without email: your own password changed here (the current one first), and the page a
// one-time reset link opens (an administrator issues it; no password is ever shown to anyone).
import { useState } from 'preact/hooks'
import { api } from '../api.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { refusalText } from '../api-messages.js'

/** The two new-password fields, which must agree (the API checks the length). */
function newPassword(form) {
  const password = String(form.get('new_password'))
  if (password !== String(form.get('again'))) throw new Error(t('The two new passwords differ'))
  return password
}

const NewPasswordFields =
  () => html`<label>${t('New password')} <input name="new_password" type="password" required minlength="10" maxlength="1024" autocomplete="new-password" /></label>
  <label>${t('New password again')} <input name="again" type="password" required minlength="10" maxlength="1024" autocomplete="new-password" /></label>`

export function Account({ user }) {
  const [message, setMessage] = useState({ text: '', error: false })
  const submit = async (event) => {
    event.preventDefault()
    const form = new FormData(event.target)
    try {
      const res = await api('POST', '/session/password/', { current_password: form.get('current_password'), new_password: newPassword(form) })
      if (res.status !== 204) throw new Error(refusalText(res.body, t('The password was not changed ({status})', { status: res.status })))
      event.target.reset()
      setMessage({ text: t('Password changed. Your other sessions have ended; this one goes on.'), error: false })
    } catch (e) {
      setMessage({ text: e.message, error: true })
    }
  }
  return html`<h1>${t('Your account')}</h1>
    <p>${t('Signed in as')} <strong>${user.username}</strong>.</p>
    <h2>${t('Change your password')}</h2>
    <form class="stack narrow" onSubmit=${submit}>
      <!-- Whose password this is, for the browser's password manager. -->
      <input type="text" name="username" autocomplete="username" value=${user.username} hidden readonly />
      <label>${t('Current password')} <input name="current_password" type="password" required autocomplete="current-password" /></label>
      <${NewPasswordFields} />
      ${message.text && html`<p class=${message.error ? 'error' : 'notice'} role=${message.error ? 'alert' : 'status'}>${message.text}</p>`}
      <button type="submit">${t('Change password')}</button>
    </form>`
}

export function ResetPassword({ token, onDone }) {
  const [state, setState] = useState({ text: '', error: false, done: false })
  const submit = async (event) => {
    event.preventDefault()
    try {
      const res = await api('POST', '/session/reset/', { token, new_password: newPassword(new FormData(event.target)) })
      if (res.status !== 204) throw new Error(refusalText(res.body, t('The password was not set ({status})', { status: res.status })))
      setState({ text: t('Your password is set: sign in with it.'), error: false, done: true })
    } catch (e) {
      setState({ text: e.message, error: true, done: false })
    }
  }
  return html`<main id="content">
    <h1>${t('Set your password')}</h1>
    ${
      state.done
        ? html`<p class="notice" role="status">${state.text}</p><button onClick=${onDone}>${t('Sign in')}</button>`
        : html`<p>${t('This link was made for you by an administrator. It works once, for 24 hours.')}</p>
          <form class="stack narrow" onSubmit=${submit}>
            <${NewPasswordFields} />
            ${state.text && html`<p class="error" role="alert">${state.text}</p>`}
            <button type="submit">${t('Set password')}</button>
          </form>`
    }
  </main>`
}
