// A full garbage collection of the calling thread's isolate, without starting Node with --expose-gc.
import v8 from 'node:v8'
import vm from 'node:vm'

let collect: (() => void) | undefined

export function fullCollection(): void {
  if (!collect) {
    v8.setFlagsFromString('--expose-gc')
    collect = vm.runInNewContext('gc') as () => void
  }
  collect()
}
