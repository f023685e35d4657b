// The API's refusals of an export, in the API's language (English): kept apart from the modules that
// draw, whose every text is translated (test/i18n.test.ts reads them).
import { ApiError } from '../core/errors.js'

/** 422 for a dashboard with more charts than an export draws (saved before the limit, or written around the API). */
export const tooManyCharts = (count: number, limit: number) =>
  new ApiError(422, 'TOO_MANY_CHARTS', `The dashboard holds ${count} charts; an export draws at most ${limit} (MAX_CHARTS_PER_DASHBOARD)`, { limit })
