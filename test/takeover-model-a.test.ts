// Keys held by claim against the rewrite of every repeated key, seeds 1 and 2 (test/takeover-model.ts).
import t from 'tap'
import { compareRuns } from './takeover-model.js'

compareRuns(t, [1, 2])
