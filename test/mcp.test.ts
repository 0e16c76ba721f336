/**
 * `mcp` as an MCP client runs it: the real bin spawned over a PGlite data directory a `replay`
 * filled, spoken to in JSON-RPC over stdio (initialize, tools/list, tools/call), its stdout holding
 * only the protocol.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Schema } from "effect"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as RecallTools from "../src/layers/internal/recallTools.js"
import { cleanEnv, cli, root, tempDir } from "./fixtures/cli.js"

const bundled = readFileSync(join(root, "examples", "conversation.jsonl"), "utf8").split("\n")
  .filter((line) => line.trim().length > 0)
const Entry = Schema.parseJson(Schema.Struct({ role: Schema.String }))
const Facts = Schema.parseJson(Schema.Array(Schema.Struct({
  key: Schema.String,
  value: Schema.String,
  firstSeenTurn: Schema.Int
})))

/** The planted order number, and the turn of the bundled conversation that first holds it. */
const orderFact = Schema.decodeUnknownSync(Facts)(
  readFileSync(join(root, "examples", "conversation.facts.json"), "utf8")
).find((fact) => fact.key === "order_number")
const turnStarts = bundled.flatMap((line, i) => (Schema.decodeUnknownSync(Entry)(line).role === "user" ? [i + 1] : []))
const orderTurnStart = turnStarts[(orderFact?.firstSeenTurn ?? 0) - 1] ?? 0
const orderTurnEnd = (turnStarts[orderFact?.firstSeenTurn ?? 0] ?? 0) - 1
/** Enough of the bundled conversation to hold the order, and turns after it: cheap to replay. */
const prefix = bundled.slice(0, 120)

const spawnCli = (args: ReadonlyArray<string>) =>
  spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { cwd: root, env: cleanEnv() })

const Response = Schema.parseJson(Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.Number,
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Struct({ code: Schema.Number, message: Schema.String }))
}))

/** An MCP session with a spawned server: requests by id, every stdout line kept. */
const session = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const child: ChildProcessWithoutNullStreams = yield* Effect.acquireRelease(
      Effect.sync(() => spawnCli(args)),
      (child) => Effect.sync(() => child.kill())
    )
    const lines: Array<string> = []
    const waiting = new Map<number, Deferred.Deferred<typeof Response.Type>>()
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      let end = stdout.indexOf("\n")
      while (end >= 0) {
        const line = stdout.slice(0, end)
        stdout = stdout.slice(end + 1)
        end = stdout.indexOf("\n")
        if (line.trim().length === 0) continue
        lines.push(line)
        const response = Schema.decodeUnknownOption(Response)(line)
        if (response._tag === "Some") {
          const deferred = waiting.get(response.value.id)
          if (deferred !== undefined) Deferred.unsafeDone(deferred, Effect.succeed(response.value))
        }
      }
    })
    const exited = yield* Deferred.make<number | null>()
    child.on("close", (code) => Deferred.unsafeDone(exited, Effect.succeed(code)))
    let nextId = 1
    const send = (message: object) => Effect.sync(() => child.stdin.write(`${JSON.stringify(message)}\n`))
    return {
      request: (method: string, params: object) =>
        Effect.gen(function*() {
          const id = nextId++
          const deferred = yield* Deferred.make<typeof Response.Type>()
          waiting.set(id, deferred)
          yield* send({ jsonrpc: "2.0", id, method, params })
          const response = yield* Effect.raceFirst(
            Deferred.await(deferred),
            Effect.flatMap(
              Deferred.await(exited),
              (code) => Effect.dieMessage(`the server exited (${code}) without answering ${method}; stderr: ${stderr}`)
            )
          )
          assert.isUndefined(response.error, JSON.stringify(response.error))
          return response.result
        }),
      notify: (method: string) => send({ jsonrpc: "2.0", method }),
      /** Closes stdin, as a client that is done does, and waits for the exit. */
      close: Effect.sync(() => child.stdin.end()).pipe(Effect.zipRight(Deferred.await(exited))),
      lines: Effect.sync(() => [...lines]),
      stderr: Effect.sync(() => stderr)
    }
  })

const ToolList = Schema.Struct({
  tools: Schema.Array(Schema.Struct({
    name: Schema.String,
    description: Schema.String,
    inputSchema: Schema.Struct({
      type: Schema.Literal("object"),
      required: Schema.Array(Schema.String),
      properties: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
      additionalProperties: Schema.Literal(false)
    }),
    annotations: Schema.optional(Schema.Struct({ readOnlyHint: Schema.optional(Schema.Boolean) }))
  }))
})

const CallResult = Schema.Struct({
  content: Schema.Array(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })),
  isError: Schema.optional(Schema.Boolean)
})

const SearchResult = Schema.parseJson(RecallTools.SearchMemory.successSchema)

describe("CLI: mcp", () => {
  it.scopedLive(
    "serves search_memory and read_turns of one replayed conversation over stdio",
    () =>
      Effect.gen(function*() {
        assert.isDefined(orderFact)
        const orderNumber = orderFact?.value ?? ""
        const dir = yield* tempDir
        const transcript = join(dir, "prefix.jsonl")
        writeFileSync(transcript, `${prefix.join("\n")}\n`)
        const store = ["--store", "pglite", "--data-dir", join(dir, "db")]
        const replay = yield* cli(["replay", transcript, "--conversation", "c", ...store])
        assert.strictEqual(replay.code, 0, replay.stderr)

        const mcp = yield* session(["mcp", "--conversation", "c", ...store])
        const init = Schema.decodeUnknownSync(Schema.Struct({
          protocolVersion: Schema.String,
          serverInfo: Schema.Struct({ name: Schema.String }),
          capabilities: Schema.Struct({ tools: Schema.Unknown })
        }))(
          yield* mcp.request("initialize", {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "mcp.test", version: "0.0.0" }
          })
        )
        assert.deepStrictEqual([init.protocolVersion, init.serverInfo.name], ["2025-06-18", "effect-chat-memory"])
        yield* mcp.notify("notifications/initialized")

        // Both tools, with their schemas; neither takes a conversation.
        const { tools } = Schema.decodeUnknownSync(ToolList)(yield* mcp.request("tools/list", {}))
        assert.deepStrictEqual(
          tools.map((tool) => [tool.name, tool.inputSchema.required, Object.keys(tool.inputSchema.properties)]),
          [["search_memory", ["query"], ["query", "limit"]], ["read_turns", ["fromSeq", "toSeq"], [
            "fromSeq",
            "toSeq"
          ]]]
        )
        assert.deepStrictEqual(tools.map((tool) => tool.annotations?.readOnlyHint), [true, true])
        assert.deepInclude(tools[0]?.inputSchema.properties, {
          limit: {
            anyOf: [{
              type: "integer",
              description: "a number between 1 and 10",
              title: "between(1, 10)",
              minimum: 1,
              maximum: 10
            }, { type: "null" }],
            description: "How many turns to return, 1 to 10; 5 when left out or null."
          }
        })

        // search_memory finds the turns that hold the planted order number (the best first), among them the
        // one where it was first said, whole, its tool call included.
        const found = Schema.decodeUnknownSync(CallResult)(
          yield* mcp.request("tools/call", { name: "search_memory", arguments: { query: orderNumber, limit: 10 } })
        )
        assert.isFalse(found.isError ?? false)
        const { turns } = Schema.decodeUnknownSync(SearchResult)(found.content[0]?.text)
        assert.isAtLeast(turns.length, 1)
        assert.isAtMost(turns.length, 10)
        assert.isTrue(turns[0]?.messages.some((m) => m.text.includes(orderNumber)))
        const turn = turns.find((t) => t.fromSeq === orderTurnStart)
        assert.isDefined(turn, JSON.stringify(turns.map((t) => [t.fromSeq, t.toSeq])))
        assert.strictEqual(turn?.toSeq, orderTurnEnd)
        assert.deepStrictEqual(turn?.messages.map((m) => m.role), ["user", "assistant", "tool", "assistant"])
        assert.include(turn?.messages[1]?.text, "[calls lookup_order")
        assert.include(turn?.messages[2]?.text, orderNumber)
        // Over MCP, limit may be left out: the default number of turns.
        const defaulted = Schema.decodeUnknownSync(CallResult)(
          yield* mcp.request("tools/call", { name: "search_memory", arguments: { query: orderNumber } })
        )
        assert.isFalse(defaulted.isError ?? false, defaulted.content[0]?.text)
        const byDefault = Schema.decodeUnknownSync(SearchResult)(defaulted.content[0]?.text).turns
        assert.isAtLeast(byDefault.length, 1)
        assert.isAtMost(byDefault.length, 5)

        // read_turns reads the stored messages; a bad range is an error result, not a protocol error.
        const read = Schema.decodeUnknownSync(CallResult)(
          yield* mcp.request("tools/call", {
            name: "read_turns",
            arguments: { fromSeq: orderTurnStart, toSeq: orderTurnEnd }
          })
        )
        assert.isFalse(read.isError ?? false)
        assert.include(read.content[0]?.text, orderNumber)
        const refused = Schema.decodeUnknownSync(CallResult)(
          yield* mcp.request("tools/call", { name: "read_turns", arguments: { fromSeq: 10, toSeq: 5 } })
        )
        assert.isTrue(refused.isError)
        assert.deepStrictEqual(JSON.parse(refused.content[0]?.text ?? "null"), {
          error: "toSeq (5) must not be below fromSeq (10)"
        })

        // The client closes stdin: the server exits; stdout held nothing but JSON-RPC.
        assert.strictEqual(yield* mcp.close, 0)
        for (const line of yield* mcp.lines) assert.match(line, /^\{"jsonrpc":"2\.0",/)
        assert.include(yield* mcp.stderr, "serving search_memory and read_turns for \"c\"")
      })
  )

  it.live(
    "an invalid conversation id is refused in one line on stderr",
    () =>
      Effect.map(cli(["mcp", "--conversation", "", "--store", "memory"]), (result) => {
        assert.notStrictEqual(result.code, 0)
        assert.include(result.stderr, "invalid --conversation: must not be empty")
      })
  )
})
