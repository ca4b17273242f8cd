// The slice of the WebAssembly JS API the matcher uses (shipped: dist/*.d.ts reference it). Node 20 has it at runtime, but neither
// lib ES2023 nor @types/node 20 declares it (only lib.dom does), and this package must not
// depend on the DOM typings.
declare global {
  namespace WebAssembly {
    interface MemoryDescriptor {
      initial: number
      maximum?: number
      shared?: boolean
    }
    class Memory {
      constructor(descriptor: MemoryDescriptor)
      readonly buffer: ArrayBuffer | SharedArrayBuffer
      grow(delta: number): number
    }
    class Module {
      constructor(bytes: Uint8Array | ArrayBuffer)
    }
    class Instance {
      constructor(module: Module, imports?: Record<string, Record<string, unknown>>)
      readonly exports: Record<string, unknown>
    }
  }
}
export {}
