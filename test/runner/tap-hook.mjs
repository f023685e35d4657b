// Module resolution hook of the test workers: a test file's `tap` is the subtest of that file
// (current-test.mjs); the helpers beside it keep tap's process-wide root.
const CURRENT_TEST = new URL('./current-test.mjs', import.meta.url).href

export async function resolve(specifier, context, next) {
  if (specifier === 'tap' && context.parentURL?.endsWith('.test.ts')) return { url: CURRENT_TEST, shortCircuit: true }
  return next(specifier, context)
}
