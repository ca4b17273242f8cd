// A byte stream over a MessagePort, shaped like the net.Socket that postgres.js and the PGlite
// server use: the service's own connections to its embedded database (in a thread of the same
// process) go through a MessageChannel instead of loopback TCP. Measured at 1 000 GETs/s on PGlite,
// the TCP writes took 12 % of the service thread and 17 % of the database thread.
//
// Either side ending its writes ends the other's reads, and a stream that has ended both ways closes
// (allowHalfOpen false), as a TCP connection does when the peer ends it; closing the port closes
// both ends.
import { Duplex } from 'node:stream'
import type { MessagePort } from 'node:worker_threads'

/** The message that says "no more bytes" (a FIN). */
const END = null

export class PortSocket extends Duplex {
  constructor(private readonly port: MessagePort) {
    super({ allowHalfOpen: false })
    port.on('message', (chunk: Uint8Array | typeof END) => {
      if (chunk === END) this.push(null)
      else this.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    })
    port.once('close', () => this.destroy())
  }

  /** postgres.js asks before sending its Terminate message and while closing. */
  get readyState(): 'open' | 'closed' {
    return this.destroyed ? 'closed' : 'open'
  }

  override _read(): void {
    // Messages are pushed as they arrive; a MessagePort cannot be paused.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.send([chunk])
    callback()
  }

  /** Corked writes (a whole unit's answer) cross as one message. */
  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this.send(chunks.map(({ chunk }) => chunk))
    callback()
  }

  /**
   * Posts the bytes in a buffer of their own, transferred. Posting a Buffer clones the whole
   * ArrayBuffer under it: 8 KiB of Node's pool for a 60-byte message, or all of postgres.js's
   * reused write buffer, which keeps the size of the largest statement ever sent (an audit block
   * of 100 KiB and more for every later Bind). At 1 000 GETs/s that garbage ran the database
   * thread's heap through a full collection every 400 ms.
   */
  private send(chunks: readonly Uint8Array[]): void {
    const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0))
    let at = 0
    for (const chunk of chunks) {
      bytes.set(chunk, at)
      at += chunk.byteLength
    }
    this.port.postMessage(bytes, [bytes.buffer])
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.port.postMessage(END)
    callback()
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.port.close()
    callback(error)
  }
}
