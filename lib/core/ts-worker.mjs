// A pool thread's entry when the task's module is TypeScript (tests and `npm run dev` run under tsx):
// Node 20 does not carry a process's module hooks into its worker threads, so the thread registers
// tsx itself before importing the module. The built server's threads load its JavaScript directly.
import { workerData } from 'node:worker_threads'
import { register } from 'tsx/esm/api'

register()
const { default: task } = await import(workerData.module)

export default task
