// Keys held by claim against the rewrite of every repeated key, seeds 3 and 4 (test/takeover-model.ts).
import t from 'tap'
import { compareRuns } from './takeover-model.js'

compareRuns(t, [3, 4])
