import { Context, Layer } from "effect"

/**
 * stderr, batched (issue 12): the lines of one turn of the event loop go out in one write, in a
 * macrotask after the turn, so a call's audit line no longer puts a synchronous pipe write on
 * the path to its response. Lines keep their order; a burst is written once it reaches
 * MAX_PENDING lines; whatever is pending when the process exits is written then (stderr writes
 * are synchronous for pipes, files and terminals, so nothing is lost on a normal exit).
 */
const MAX_PENDING = 1024

const batchedStderr = (): ((line: string) => void) => {
  let pending: string[] = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const text = `${pending.join("\n")}\n`
    pending = []
    process.stderr.write(text)
  }
  process.on("exit", flush)
  return (line) => {
    pending.push(line)
    if (pending.length >= MAX_PENDING) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}

/** One batcher per process, however many layers are built (one exit listener). */
let stderrWriter: ((line: string) => void) | undefined

/**
 * Where audit and log lines go. The live sink is stderr: stdout belongs to the MCP protocol.
 * Tests swap in the memory sink and read the lines back.
 */
export class AuditSink extends Context.Tag("@serverfs/telemetry-local/AuditSink")<
  AuditSink,
  { readonly write: (line: string) => void }
>() {
  static readonly stderr = Layer.sync(AuditSink, () => {
    stderrWriter ??= batchedStderr()
    return { write: stderrWriter }
  })

  static memory(): { readonly layer: Layer.Layer<AuditSink>; readonly lines: string[] } {
    const lines: string[] = []
    return { layer: Layer.succeed(AuditSink, { write: (line) => lines.push(line) }), lines }
  }
}
