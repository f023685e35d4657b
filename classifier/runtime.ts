// TF.js set-up shared by training and serving: the wasm backend (cpu as a fallback), prod mode, and
// the one kernel the wasm backend lacks for training embeddings (UnsortedSegmentSum, the gradient of
// a gather), plus a faster cpu version of it (stack-notes.md §1).
import * as tf from '@tensorflow/tfjs'
import '@tensorflow/tfjs-backend-wasm'

type KernelArgs = {
  inputs: Record<string, tf.TensorInfo>
  backend: unknown
  attrs: Record<string, unknown>
}

/** out[segment[i]] += x[i] for every row i; rows with an out-of-range segment are dropped. */
export function segmentSum(x: ArrayLike<number>, segments: ArrayLike<number>, numSegments: number, inner: number, out: Float32Array) {
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]
    if (s < 0 || s >= numSegments) continue
    const o = s * inner
    const xi = i * inner
    for (let j = 0; j < inner; j++) out[o + j] += x[xi + j]
  }
}

function innerSize(x: tf.TensorInfo, segmentIds: tf.TensorInfo) {
  return x.shape.slice(segmentIds.shape.length).reduce((a, b) => a * b, 1)
}

let registered = false
function registerKernels() {
  if (registered) return
  registered = true
  tf.registerKernel({
    kernelName: 'UnsortedSegmentSum',
    backendName: 'wasm',
    kernelFunc: (({ inputs: { x, segmentIds }, backend, attrs: { numSegments } }: KernelArgs) => {
      const wasm = backend as { makeOutput(shape: number[], dtype: string): tf.TensorInfo; typedArrayFromHeap(t: tf.TensorInfo): Float32Array }
      const n = numSegments as number
      const out = wasm.makeOutput([n, ...x.shape.slice(segmentIds.shape.length)], 'float32')
      const values = wasm.typedArrayFromHeap(out)
      values.fill(0)
      segmentSum(wasm.typedArrayFromHeap(x), wasm.typedArrayFromHeap(segmentIds), n, innerSize(x, segmentIds), values)
      return out
    }) as unknown as tf.KernelFunc,
  })
  tf.unregisterKernel('UnsortedSegmentSum', 'cpu')
  tf.registerKernel({
    kernelName: 'UnsortedSegmentSum',
    backendName: 'cpu',
    kernelFunc: (({ inputs: { x, segmentIds }, backend, attrs: { numSegments } }: KernelArgs) => {
      const cpu = backend as {
        data: { get(id: unknown): { values: ArrayLike<number> } }
        makeTensorInfo(s: number[], d: string, v: Float32Array): tf.TensorInfo
      }
      const n = numSegments as number
      const inner = innerSize(x, segmentIds)
      const out = new Float32Array(n * inner)
      segmentSum(cpu.data.get(x.dataId).values, cpu.data.get(segmentIds.dataId).values, n, inner, out)
      return cpu.makeTensorInfo([n, ...x.shape.slice(segmentIds.shape.length)], 'float32', out)
    }) as unknown as tf.KernelFunc,
  })
}

/** Selects wasm (or cpu when wasm cannot start); returns the backend in use. */
export async function initTf(preferred: 'wasm' | 'cpu' = 'wasm', log: (message: string) => void = () => {}): Promise<string> {
  tf.enableProdMode()
  registerKernels()
  // The wasm module (Emscripten) adds process listeners that rethrow any uncaught exception or
  // rejection from inside its handler, which makes Node exit with code 7 and blame the module for every
  // error of the process: they are removed once it has started.
  const listening = { uncaughtException: process.listeners('uncaughtException'), unhandledRejection: process.listeners('unhandledRejection') }
  try {
    if (!(await tf.setBackend(preferred))) throw new Error(`backend ${preferred} did not initialise`)
  } catch (error) {
    log(`TF.js ${preferred} backend unavailable (${(error as Error).message}); falling back to cpu`)
    await tf.setBackend('cpu')
  }
  await tf.ready()
  for (const listener of process.listeners('uncaughtException')) {
    if (!listening.uncaughtException.includes(listener)) process.removeListener('uncaughtException', listener)
  }
  for (const listener of process.listeners('unhandledRejection')) {
    if (!listening.unhandledRejection.includes(listener)) process.removeListener('unhandledRejection', listener)
  }
  return tf.getBackend()
}

export { tf }
