import { Context, Layer } from "effect"

/**
 * Where audit and log lines go. The live sink is stderr: stdout belongs to the MCP protocol.
 * Tests swap in the memory sink and read the lines back.
 */
export class AuditSink extends Context.Tag("@serverfs/telemetry-local/AuditSink")<
  AuditSink,
  { readonly write: (line: string) => void }
>() {
  static readonly stderr = Layer.succeed(AuditSink, {
    write: (line) => {
      process.stderr.write(`${line}\n`)
    }
  })

  static memory(): { readonly layer: Layer.Layer<AuditSink>; readonly lines: string[] } {
    const lines: string[] = []
    return { layer: Layer.succeed(AuditSink, { write: (line) => lines.push(line) }), lines }
  }
}
