// What `import t from 'tap'` gives a test file run by test/runner/worker.mjs: the subtest the worker
// opened for that file, so the file's top-level tests, teardowns and plan belong to it, as they belong
// to the file's own root when tap runs it in a process of its own.
let current

/** The worker names the subtest of the file it is about to import. */
export function runningIn(test) {
  current = test
}

export default new Proxy(
  {},
  {
    get(_, name) {
      if (!current) throw new Error('a test file imported tap outside test/runner/worker.mjs')
      const value = current[name]
      return typeof value === 'function' ? value.bind(current) : value
    },
  },
)
