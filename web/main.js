// The web app for people (served at /app/, built only on the public API): sign in with a password,
// then the dashboards. Preact with htm templates: no build step, every file served as it is here.
import { h, render } from '/app/vendor/preact.mjs'
import { useEffect, useState } from '/app/vendor/preact-hooks.mjs'
import htm from '/app/vendor/htm.mjs'

const html = htm.bind(h)

/** The API with the session cookie; a change carries this page's Origin, which the server checks. */
async function api(method, path, body) {
  const response = await fetch(`/api/v1${path}`, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null }
}

function SignIn({ onSignedIn }) {
  const [error, setError] = useState('')
  const submit = async (event) => {
    event.preventDefault()
    const form = new FormData(event.target)
    const res = await api('POST', '/session/', { username: form.get('username'), password: form.get('password') })
    if (res.status === 200) onSignedIn(res.body)
    else setError(res.body?.message ?? `Sign-in failed (${res.status})`)
  }
  return html`<h1>Sign in</h1>
    <form class="sign-in" onSubmit=${submit}>
      <label>Username <input name="username" autocomplete="username" required /></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" required /></label>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <button type="submit">Sign in</button>
    </form>`
}

function Dashboards({ user, onSignedOut }) {
  const [dashboards, setDashboards] = useState(null)
  useEffect(() => {
    api('GET', '/dashboard/?limit=1000').then((res) => setDashboards(res.body?.objects ?? []))
  }, [])
  const signOut = async () => {
    await api('DELETE', '/session/')
    onSignedOut()
  }
  return html`<header>
      <h1>Dashboards</h1>
      <p>Signed in as <strong>${user.username}</strong> <button class="secondary" onClick=${signOut}>Sign out</button></p>
    </header>
    ${dashboards === null
      ? html`<p>Loading…</p>`
      : html`<ul class="dashboards">
          ${dashboards.map((d) => html`<li key=${d.id}><strong>${d.title}</strong>${d.description ? html` — ${d.description}` : ''}</li>`)}
        </ul>`}`
}

function App() {
  const [user, setUser] = useState(undefined)
  useEffect(() => {
    api('GET', '/session/').then((res) => setUser(res.status === 200 ? res.body : null))
  }, [])
  if (user === undefined) return html`<p>Loading…</p>`
  return user ? html`<${Dashboards} user=${user} onSignedOut=${() => setUser(null)} />` : html`<${SignIn} onSignedIn=${setUser} />`
}

render(html`<${App} />`, document.getElementById('app'))
