/**
 * The stdio transport of `mcp`: newline-delimited JSON-RPC 2.0 between an MCP client and
 * `@effect/ai`'s `McpServer`, guarded at both ends.
 *
 * Each line from the client is checked before the server sees it:
 *
 * - A line that is not JSON gets a parse error (-32700, id null).
 * - A message that is not a request gets an invalid-request error (-32600).
 * - An unknown method gets -32601, and params the method refuses get -32602 (unknown fields are ignored).
 * - A `tools/call` whose arguments the tool refuses gets a tool error result (`isError: true`).
 *
 * Each answer of the server is rewritten to plain JSON-RPC. Its id is the one the client sent,
 * even a string or 0. Errors are `{ code, message }` only. A defect becomes an internal error
 * (-32603), with nothing of it on the wire.
 *
 * The server keeps serving after any of these. Each protocol error logs a warning on stderr.
 */
import * as McpSchema from "@effect/ai/McpSchema"
import * as McpServer from "@effect/ai/McpServer"
import { Duration, Effect, Either, Layer, Option, ParseResult, Predicate, Schema, Sink, Stream } from "effect"

/** What the transport serves. */
export interface Options {
  /** The server's name and version, as its `initialize` answer says them. */
  readonly name: string
  readonly version: string
  /** The client's lines. */
  readonly stdin: Stream.Stream<Uint8Array>
  /** Writes text to the client as it is. */
  readonly writeOut: (text: string) => Effect.Effect<void>
  /**
   * The tools, by name. Each checks a call's arguments and says why it refuses them, or nothing.
   * The model sees the refusal as the call's error result. A tool not named here is unknown (-32602).
   */
  readonly tools: ReadonlyMap<string, (args: unknown) => Option.Option<string>>
}

/** How long input that has ended waits for the answers to the requests it made. */
const drainTimeout = Duration.seconds(30)

const ParseErrorCode = -32700
const InvalidRequestCode = -32600
const MethodNotFoundCode = -32601
const InvalidParamsCode = -32602
const InternalErrorCode = -32603

/** A request id as JSON-RPC has it. */
type Id = string | number

const JsonId = Schema.Union(Schema.String, Schema.Number)

const decodeJson = Schema.decodeUnknownEither(Schema.parseJson())

/** A request (with an id) or a notification (without one) from the client. */
const Call = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(JsonId),
  method: Schema.String,
  params: Schema.optional(Schema.Unknown)
})
const decodeCall = Schema.decodeUnknownEither(Call)

/** A message of the server, as `@effect/ai`'s JSON-RPC serialization writes it, without its own fields. */
const Answer = Schema.Struct({
  id: Schema.optional(Schema.Unknown),
  method: Schema.optional(Schema.String),
  params: Schema.optional(Schema.Unknown),
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Unknown),
  chunk: Schema.optional(Schema.Unknown)
})
const decodeAnswer = Schema.decodeUnknownOption(Answer)

/** A server failure that is a JSON-RPC error of the protocol (`McpError`): its code and message. */
const ProtocolFailure = Schema.Struct({
  data: Schema.Struct({
    _tag: Schema.Literal("Fail"),
    error: Schema.Struct({ code: Schema.Int, message: Schema.String })
  })
})
const decodeProtocolFailure = Schema.decodeUnknownOption(ProtocolFailure)

/** A parse error's issues as one line: `path: message; …`. */
export const issuesText = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map(({ message, path }) => (path.length === 0 ? message : `${path.map(String).join(".")}: ${message}`))
    .join("; ")

/** Text as one line of at most `max` characters, for the log. */
const oneLine = (text: string, max = 200): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max)}…` : line
}

/** The defect of an encoded cause, if it holds one, as one line. */
const defectText = (data: unknown): string => {
  if (Predicate.hasProperty(data, "defect")) {
    const defect = data.defect
    return oneLine(typeof defect === "string" ? defect : JSON.stringify(defect) ?? "a defect")
  }
  return oneLine(JSON.stringify(data) ?? "a failure")
}

/** The params of a method, `{}` when none were sent. A `tools/call` without arguments gets `{}`. */
const paramsOf = (method: string, params: unknown): unknown => {
  const given = params === undefined ? {} : params
  return method === "tools/call" && Predicate.isRecord(given) && !("arguments" in given)
    ? { ...given, arguments: {} }
    : given
}

/** Checks params against the method's schema: why they are refused, if they are. */
const refusal = (schema: Schema.Schema.AnyNoContext, params: unknown): Option.Option<string> =>
  Either.match(ParseResult.decodeUnknownEither(schema)(params), {
    onLeft: (issue) => Option.some(issuesText(new ParseResult.ParseError({ issue }))),
    onRight: () => Option.none()
  })

/**
 * The MCP server's layer over the guarded transport: `McpServer.layerStdio`, with the client's
 * lines checked on the way in and the server's answers rewritten on the way out. When the input
 * ends, answers to requests already made are written, waiting at most 30 s. Then the input is
 * closed to the server, which stops.
 */
export const layer = (options: Options): Layer.Layer<McpServer.McpServer | McpSchema.McpServerClient> =>
  Layer.unwrapEffect(Effect.sync(() => {
    // The client's ids, by the number the server knows the request by. The server's own
    // serialization reads every id as a number, and so loses string ids and 0.
    const pending = new Map<number, Id>()
    const cancelled = new Set<number>()
    let nextId = 1
    let lineNumber = 0

    const write = (message: object) => options.writeOut(`${JSON.stringify(message)}\n`)

    const fault = (text: string) => Effect.logWarning(`mcp: ${text}`)

    const reject = (id: Id | null, code: number, message: string, logged: string) =>
      Effect.zipRight(
        write({ jsonrpc: "2.0", id, error: { code, message } }),
        fault(`line ${lineNumber}: ${logged}`)
      )

    const internalOf = (original: unknown): number | undefined => {
      for (const [internal, id] of pending) if (id === original) return internal
      return undefined
    }

    /** What one line of the client becomes: the line the server is given, if any. */
    const incoming = (line: string): Effect.Effect<Option.Option<string>> =>
      Effect.gen(function*() {
        lineNumber += 1
        if (line.trim().length === 0) return Option.none()
        const json = decodeJson(line)
        if (Either.isLeft(json)) {
          yield* reject(null, ParseErrorCode, "Parse error: not JSON", `not JSON: ${oneLine(line, 80)}`)
          return Option.none()
        }
        const message = json.right
        const sentId = Predicate.hasProperty(message, "id") ? message.id : undefined
        const replyId: Id | null = typeof sentId === "string" || typeof sentId === "number" ? sentId : null
        if (Array.isArray(message)) {
          yield* reject(null, InvalidRequestCode, "Invalid Request: batches are not supported", "a batch")
          return Option.none()
        }
        if (!Predicate.hasProperty(message, "method")) {
          if (Predicate.hasProperty(message, "result") || Predicate.hasProperty(message, "error")) {
            yield* fault(`line ${lineNumber}: a response to no request of the server: ignored`)
            return Option.none()
          }
          yield* reject(replyId, InvalidRequestCode, "Invalid Request", "not a JSON-RPC request")
          return Option.none()
        }
        const decoded = decodeCall(message)
        if (Either.isLeft(decoded)) {
          const text = issuesText(decoded.left)
          yield* reject(replyId, InvalidRequestCode, `Invalid Request: ${text}`, `an invalid request: ${text}`)
          return Option.none()
        }
        const call = decoded.right
        const params = paramsOf(call.method, call.params)

        if (call.id === undefined) {
          // A notification: never answered. One the server does not know, or cannot read, is dropped.
          const rpc = McpSchema.ClientNotificationRpcs.requests.get(call.method)
          if (rpc === undefined || Option.isSome(refusal(rpc.payloadSchema, params))) return Option.none()
          if (call.method !== "notifications/cancelled") {
            return Option.some(JSON.stringify({ jsonrpc: "2.0", method: call.method, params }))
          }
          const target = Predicate.hasProperty(params, "requestId") ? internalOf(params.requestId) : undefined
          if (target === undefined || !Predicate.isRecord(params)) return Option.none()
          // The client expects no answer to a cancelled request. One that comes anyway is dropped.
          pending.delete(target)
          cancelled.add(target)
          return Option.some(
            JSON.stringify({ jsonrpc: "2.0", method: call.method, params: { ...params, requestId: target } })
          )
        }

        const rpc = McpSchema.ClientRequestRpcs.requests.get(call.method)
        if (rpc === undefined) {
          yield* reject(
            call.id,
            MethodNotFoundCode,
            `Method not found: ${call.method}`,
            `unknown method ${oneLine(call.method, 80)}`
          )
          return Option.none()
        }
        const refused = Predicate.isRecord(params)
          ? refusal(rpc.payloadSchema, params)
          : Option.some("params must be an object")
        if (Option.isSome(refused)) {
          yield* reject(
            call.id,
            InvalidParamsCode,
            `Invalid params: ${refused.value}`,
            `invalid params of ${call.method}: ${refused.value}`
          )
          return Option.none()
        }
        if (call.method === "tools/call" && Predicate.hasProperty(params, "name")) {
          const name = String(params.name)
          const check = options.tools.get(name)
          if (check === undefined) {
            yield* reject(call.id, InvalidParamsCode, `Unknown tool: ${name}`, `unknown tool ${oneLine(name, 80)}`)
            return Option.none()
          }
          const refusedArguments = check(Predicate.hasProperty(params, "arguments") ? params.arguments : {})
          if (Option.isSome(refusedArguments)) {
            // The model called the tool wrongly. The tool's error result lets it read and retry.
            const error = { error: `Invalid arguments for ${name}: ${refusedArguments.value}` }
            yield* write({
              jsonrpc: "2.0",
              id: call.id,
              result: {
                content: [{ type: "text", text: JSON.stringify(error) }],
                structuredContent: error,
                isError: true
              }
            })
            return Option.none()
          }
        }
        const internal = nextId++
        pending.set(internal, call.id)
        return Option.some(JSON.stringify({ jsonrpc: "2.0", id: internal, method: call.method, params }))
      })

    /** One message of the server, rewritten for the client (or dropped). */
    const outgoing = (line: string): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (line.trim().length === 0) return
        const answer = Option.flatMap(Either.getRight(decodeJson(line)), decodeAnswer)
        if (Option.isNone(answer)) return yield* fault("the server wrote a message that is not JSON-RPC: dropped")
        const { chunk, error, id, method, params, result } = answer.value
        if (method !== undefined) {
          // The server's own notifications and requests. Its transport's messages stay inside.
          if (method.startsWith("@effect/rpc/")) return
          return yield* write({
            jsonrpc: "2.0",
            ...(typeof id === "number" || typeof id === "string" ? { id } : {}),
            method,
            ...(params === undefined ? {} : { params })
          })
        }
        if (chunk !== undefined) return
        const internal = typeof id === "number" ? id : undefined
        if (internal !== undefined && cancelled.delete(internal)) return
        const original = internal === undefined ? undefined : pending.get(internal)
        if (internal !== undefined) pending.delete(internal)
        const replyId = original ?? null
        if (error === undefined || error === null) {
          return yield* write({ jsonrpc: "2.0", id: replyId, result: result === undefined ? {} : result })
        }
        const failure = decodeProtocolFailure(error)
        if (Option.isSome(failure)) {
          const { code, message } = failure.value.data.error
          return yield* write({ jsonrpc: "2.0", id: replyId, error: { code, message } })
        }
        yield* write({ jsonrpc: "2.0", id: replyId, error: { code: InternalErrorCode, message: "Internal error" } })
        yield* fault(
          `an internal error answered request ${JSON.stringify(replyId)}: ${
            defectText(Predicate.hasProperty(error, "data") ? error.data : error)
          }`
        )
      })

    const answered = Effect.gen(function*() {
      while (pending.size > 0) yield* Effect.sleep(Duration.millis(10))
    })
    const drained = Effect.flatMap(Effect.option(Effect.timeout(answered, drainTimeout)), (done) =>
      Option.isSome(done)
        ? Effect.void
        : fault(`the input ended; ${pending.size} requests still unanswered after ${Duration.format(drainTimeout)}`))

    const encoder = new TextEncoder()
    const decoder = new TextDecoder()
    const stdin = options.stdin.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.mapEffect(incoming),
      Stream.filterMap((line) => line),
      Stream.map((line) => encoder.encode(`${line}\n`)),
      // The input ended. The server answers what it was asked before it is told.
      Stream.concat(Stream.drain(Stream.fromEffect(drained)))
    )
    const stdout = Sink.forEach((chunk: Uint8Array | string) =>
      Effect.forEach(
        (typeof chunk === "string" ? chunk : decoder.decode(chunk)).split("\n"),
        outgoing,
        { discard: true }
      )
    )
    return McpServer.layerStdio({ name: options.name, version: options.version, stdin, stdout })
  }))
