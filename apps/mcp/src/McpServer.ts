import { createRequire } from "node:module"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { quoted, ReadFailed, renderError } from "@serverfs/domain"
import { Configuration, loadMcpTransport, WorkdirRegistry } from "@serverfs/policy"
import { BridgeClient } from "@serverfs/rpc"
import { AuditLog } from "@serverfs/telemetry-local"
import { BinaryTransfer, Mutations, ReadChannels, WorkdirRoots } from "@serverfs/workspace"
import { Cause, Effect, Either, Runtime } from "effect"
import { INSTRUCTIONS } from "./Instructions.js"
import { objectJsonSchema } from "./JsonSchema.js"
import { ProtocolError } from "./ProtocolError.js"
import { parseResourceUri, RESOURCE_TEMPLATE } from "./ResourceTemplate.js"
import { serverCatalog } from "./ServerCatalog.js"
import { callTool, responseTooLarge } from "./ToolCall.js"
import { agentTools, agentToolsEnabled } from "./tools/agentTools.js"
import { binaryTools, binaryToolsEnabled } from "./tools/binaryTools.js"
import { mutationTools } from "./tools/mutationTools.js"
import { readTools } from "./tools/readTools.js"

const { version } = createRequire(import.meta.url)("../package.json") as { readonly version: string }
export const SERVER_VERSION = version
export const SERVER_NAME = "ServerFS"

/** Codes that mean "there is nothing at this URI" get MCP's resource-not-found error code. */
const NOT_FOUND = new Set(["WORKDIR_NOT_FOUND", "PATH_NOT_FOUND"])
const RESOURCE_NOT_FOUND = -32002

/**
 * Agent tools pass the bridge's results through unchanged (tool-contracts §8), and protocol v1
 * grows by adding fields, which the bridge client keeps: their advertised output schemas must
 * admit properties they do not list, at every level, or a client that checks structuredContent
 * against the outputSchema refuses a newer (or the reference) bridge's answer.
 */
const admitExtraProperties = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(admitExtraProperties)
  if (schema === null || typeof schema !== "object") return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === "additionalProperties" && value === false) continue
    out[key] = admitExtraProperties(value)
  }
  return out
}

/**
 * The MCP server: the low-level SDK `Server` (so Effect Schemas, not zod, define every tool),
 * with tools/list, tools/call, the resource template and resources/read. Transport-agnostic:
 * `connect` attaches stdio in production and an in-memory pair in tests.
 */
export class McpServer extends Effect.Service<McpServer>()("@serverfs/mcp/McpServer", {
  effect: Effect.gen(function* () {
    const { global, workdirs } = yield* Configuration
    const channels = yield* ReadChannels
    const mutations = yield* Mutations
    const audit = yield* AuditLog
    // Every call's audit line says which transport carried it (one per process).
    const transport = yield* loadMcpTransport
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runPromise(runtime)

    const agents = agentToolsEnabled(global.agentBridgeEnabled, workdirs)
      ? agentTools({
          client: yield* BridgeClient,
          workdir: (yield* WorkdirRegistry).get,
          workdirs,
          rootOf: (yield* WorkdirRoots).rootOf
        })
      : []
    const passedThrough = new Set(agents.map((t) => t.name))
    // server_info is appended to these groups, and the catalog marker is computed over exactly
    // the listing below (ServerCatalog.ts, CatalogMarker.ts).
    const { tools, listing, marker } = serverCatalog({
      name: SERVER_NAME,
      version,
      groups: [
        { group: "read", tools: readTools(channels, global) },
        { group: "mutation", tools: mutationTools(mutations) },
        { group: "binary", tools: binaryToolsEnabled(workdirs) ? binaryTools(yield* BinaryTransfer) : [] },
        { group: "agent", tools: agents }
      ],
      list: (t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: objectJsonSchema(t.input),
        outputSchema: passedThrough.has(t.name)
          ? admitExtraProperties(objectJsonSchema(t.output))
          : objectJsonSchema(t.output),
        annotations: t.annotations,
        ...(t.meta === undefined ? {} : { _meta: t.meta })
      })
    })
    const byName = new Map(tools.map((t) => [t.name, t] as const))

    const readResource = (uri: string) =>
      Effect.gen(function* () {
        const started = performance.now()
        const location = parseResourceUri(uri)
        const outcome = yield* Effect.either(
          Effect.flatMap(location, (at) =>
            channels.readResource(at.workdir, at.path).pipe(
              // The response budget applies to resources too (they do not go through callTool);
              // the text is encoded once here to measure it.
              Effect.filterOrFail(
                (read) => Buffer.byteLength(JSON.stringify(read.text)) <= global.maxResponseBytes,
                () => responseTooLarge("resources/read", global.maxResponseBytes)
              ),
              // An unexpected failure is reported by code only (tool-contracts §0: READ_FAILED).
              Effect.catchAllDefect((defect) =>
                Effect.zipRight(
                  Effect.logError("unexpected resource failure", Cause.die(defect)),
                  Effect.fail(new ReadFailed(at))
                )
              )
            )
          )
        )
        yield* audit.emit("INFO", "resource_read", {
          transport,
          duration_ms: Math.round((performance.now() - started) * 10) / 10,
          success: Either.isRight(outcome),
          workdir: Either.isRight(location) ? location.right.workdir.slice(0, 1024) : undefined,
          path: Either.isRight(location) ? location.right.path.slice(0, 1024) : undefined,
          error_code: Either.isLeft(outcome) ? outcome.left._tag : undefined
        })
        return outcome
      })

    /** Requests being handled, so a closing input still gets every answer it asked for. */
    let inFlight = 0
    let drained: (() => void) | undefined
    const track = <T>(handler: () => Promise<T>): Promise<T> => {
      inFlight++
      return handler().finally(() => {
        if (--inFlight === 0) drained?.()
      })
    }

    const make = (): Server => {
      const server = new Server(
        { name: SERVER_NAME, version },
        { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS }
      )
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }))
      server.setRequestHandler(CallToolRequestSchema, (request) =>
        track(async () => {
          const tool = byName.get(request.params.name)
          if (tool === undefined) {
            throw new ProtocolError(
              ErrorCode.InvalidParams,
              `INVALID_ARGUMENT: unknown tool ${quoted(request.params.name)}`
            )
          }
          return (await run(
            callTool(tool, request.params.arguments, audit, global.maxResponseBytes, transport)
          )) as Record<string, unknown> & {
            content: []
          }
        })
      )
      server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
        resourceTemplates: [RESOURCE_TEMPLATE]
      }))
      // Files are reached through the template; the server does not enumerate them as resources.
      server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [] }))
      server.setRequestHandler(ReadResourceRequestSchema, (request) =>
        track(async () => {
          const outcome = await run(readResource(request.params.uri))
          if (Either.isLeft(outcome)) {
            const code = NOT_FOUND.has(outcome.left._tag) ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams
            throw new ProtocolError(code, renderError(outcome.left))
          }
          return {
            contents: [
              { uri: request.params.uri, mimeType: RESOURCE_TEMPLATE.mimeType, text: outcome.right.text }
            ]
          }
        })
      )
      return server
    }

    /** Serve one connection until the peer goes away; interruption closes it. */
    const serve = (transport: Transport, closed: (onClosed: () => void) => void): Effect.Effect<void> =>
      Effect.async<void>((resume) => {
        const server = make()
        let done = false
        const finish = () => {
          if (!done) {
            done = true
            resume(Effect.void)
          }
        }
        server.onclose = finish
        // End of input: answer what was already asked, then stop. The checks run a macrotask
        // later because the SDK dispatches the last requests and writes the last responses in
        // promise callbacks that may still be queued when the input ends.
        closed(() =>
          setImmediate(() => {
            const stop = () => setImmediate(finish)
            if (inFlight === 0) stop()
            else drained = stop
          })
        )
        server.connect(transport).catch(finish)
        return Effect.promise(() => server.close().catch(() => undefined))
      })

    return { tools, marker, serve, make } as const
  })
}) {}
