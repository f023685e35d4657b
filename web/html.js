// htm bound to Preact: JSX-like templates in plain JavaScript, so the app needs no build step.
import { h } from 'preact'
import htm from 'htm'

export const html = htm.bind(h)
