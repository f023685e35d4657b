// htm bound to Preact: JSX-like templates in plain JavaScript, so the app needs no build step.
import { h } from '/app/vendor/preact.mjs'
import htm from '/app/vendor/htm.mjs'

export const html = htm.bind(h)
