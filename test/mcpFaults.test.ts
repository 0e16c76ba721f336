/**
 * `mcp` facing a client that errs, run in-process: a line that is not JSON, a message that is not
 * a request, an unknown method, a `tools/call` without arguments or with bad ones. Each is
 * answered (a JSON-RPC error, or the tool's error result), with nothing of Effect's (no `_tag`, no
 * defect) on the wire and at most one line on stderr, and the server goes on answering.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Queue, Schema, Stream } from "effect"
import { cli } from "./fixtures/cli.js"

const Reply = Schema.parseJson(Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.Union(Schema.Number, Schema.String, Schema.Null),
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Struct({ code: Schema.Number, message: Schema.String }))
}))
type Reply = typeof Reply.Type

const ToolResult = Schema.Struct({
  content: Schema.Array(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })),
  isError: Schema.Boolean
})

const ToolNames = Schema.Struct({ tools: Schema.Array(Schema.Struct({ name: Schema.String })) })

const encoder = new TextEncoder()

/**
 * An MCP session with `mcp` run in-process over the in-memory store: lines are sent one at a
 * time, each answer awaited before the next line goes, so that the server is seen to go on.
 */
const session = Effect.gen(function*() {
  const input = yield* Queue.unbounded<string | undefined>()
  const replies = yield* Queue.unbounded<string>()
  const written: Array<string> = []
  let buffer = ""
  const onStdout = (text: string) => {
    buffer += text
    let end = buffer.indexOf("\n")
    while (end >= 0) {
      const line = buffer.slice(0, end)
      buffer = buffer.slice(end + 1)
      end = buffer.indexOf("\n")
      if (line.trim().length === 0) continue
      written.push(line)
      // The server's own notifications (its tool list at start) answer nothing.
      if (Schema.decodeUnknownOption(Reply)(line)._tag === "Some") Queue.unsafeOffer(replies, line)
    }
  }
  const stdin = Stream.fromQueue(input).pipe(
    Stream.takeWhile((line) => line !== undefined),
    Stream.map((line) => encoder.encode(`${line ?? ""}\n`))
  )
  const running = yield* Effect.fork(cli(["mcp", "--conversation", "c", "--store", "memory"], { stdin, onStdout }))

  /** Sends a line (text as it is, or a message as JSON) and returns the line answering it. */
  const ask = (line: string | object) =>
    Effect.gen(function*() {
      yield* Queue.offer(input, typeof line === "string" ? line : JSON.stringify(line))
      const text = yield* Queue.take(replies)
      return { text, reply: Schema.decodeUnknownSync(Reply)(text) }
    })
  /** Sends a notification (nothing answers it). */
  const notify = (message: object) => Queue.offer(input, JSON.stringify(message))
  /** Ends the input, as a client that is done does, and waits for the run's end. */
  const close = Effect.zipRight(Queue.offer(input, undefined), Fiber.join(running))
  return { ask, notify, close, written: Effect.sync(() => [...written]) }
})

const request = (id: number | string, method: string, params?: unknown) =>
  params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }

/** The tool names a `tools/list` answer holds. */
const toolNames = (reply: Reply) => Schema.decodeUnknownSync(ToolNames)(reply.result).tools.map((tool) => tool.name)

/** The lines of stderr the faults wrote (the two notices of the start aside). */
const faultLines = (stderr: string) =>
  stderr.split("\n").filter((line) => line.trim().length > 0 && !/mcp: (serving|conversation)/.test(line))

describe("CLI: mcp facing a client that errs", () => {
  it.effect("a line that is not JSON gets a parse error, and the server answers the next request", () =>
    Effect.gen(function*() {
      const mcp = yield* session
      const init = yield* mcp.ask(request(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "mcpFaults.test", version: "0.0.0" }
      }))
      assert.strictEqual(init.reply.id, 1)
      yield* mcp.notify({ jsonrpc: "2.0", method: "notifications/initialized" })

      const garbage = yield* mcp.ask("this is { not JSON")
      assert.deepStrictEqual(JSON.parse(garbage.text), {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error: not JSON" }
      })
      const listed = yield* mcp.ask(request(2, "tools/list"))
      assert.strictEqual(listed.reply.id, 2)
      assert.deepStrictEqual(toolNames(listed.reply), ["search_memory", "read_turns"])

      // More lines the server cannot take, each answered; the server still answers after them.
      const truncated = yield* mcp.ask("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/li")
      assert.deepStrictEqual([truncated.reply.id, truncated.reply.error?.code], [null, -32700])
      const batch = yield* mcp.ask([request(4, "tools/list")])
      assert.deepStrictEqual([batch.reply.id, batch.reply.error?.code], [null, -32600])
      const notRequest = yield* mcp.ask({ hello: "world" })
      assert.deepStrictEqual([notRequest.reply.id, notRequest.reply.error?.code], [null, -32600])
      const again = yield* mcp.ask(request(5, "tools/list"))
      assert.deepStrictEqual(toolNames(again.reply), ["search_memory", "read_turns"])

      const run = yield* mcp.close
      assert.strictEqual(run.code, 0, run.stderr)
      for (const line of yield* mcp.written) assert.match(line, /^\{"jsonrpc":"2\.0",/)
      // One line on stderr per fault (four), no stack trace.
      const faults = faultLines(run.stderr)
      assert.strictEqual(faults.length, 4, run.stderr)
      for (const line of faults) assert.include(line, "mcp: line ")
    }))

  it.effect("bad calls get a JSON-RPC error or the tool's error result, with no _tag on the wire", () =>
    Effect.gen(function*() {
      const mcp = yield* session

      // No arguments at all: the tool refuses them, as the model's mistake, for it to retry.
      const bare = yield* mcp.ask(request(1, "tools/call", { name: "search_memory" }))
      const refused = Schema.decodeUnknownSync(ToolResult)(bare.reply.result)
      assert.isTrue(refused.isError)
      assert.deepStrictEqual(JSON.parse(refused.content[0]?.text ?? "null"), {
        error: "Invalid arguments for search_memory: query: is missing"
      })
      const wrong = yield* mcp.ask(request(2, "tools/call", {
        name: "read_turns",
        arguments: { fromSeq: 0, toSeq: 2, conversationId: "another" }
      }))
      const wrongResult = Schema.decodeUnknownSync(ToolResult)(wrong.reply.result)
      assert.isTrue(wrongResult.isError)
      assert.include(wrongResult.content[0]?.text, "fromSeq")
      assert.include(wrongResult.content[0]?.text, "conversationId")

      // Params the method does not take, an unknown tool, an unknown method: JSON-RPC errors.
      const noName = yield* mcp.ask(request(3, "tools/call", { arguments: {} }))
      assert.deepStrictEqual(noName.reply.error, { code: -32602, message: "Invalid params: name: is missing" })
      const notObject = yield* mcp.ask(request(4, "tools/call", "search_memory"))
      assert.deepStrictEqual(notObject.reply.error, {
        code: -32602,
        message: "Invalid params: params must be an object"
      })
      const unknownTool = yield* mcp.ask(request(5, "tools/call", { name: "delete_everything", arguments: {} }))
      assert.deepStrictEqual(unknownTool.reply.error, { code: -32602, message: "Unknown tool: delete_everything" })
      const unknownMethod = yield* mcp.ask(request(6, "resources/delete", {}))
      assert.deepStrictEqual(unknownMethod.reply.error, {
        code: -32601,
        message: "Method not found: resources/delete"
      })
      const badVersion = yield* mcp.ask({ jsonrpc: "1.0", id: 7, method: "tools/list" })
      assert.deepStrictEqual([badVersion.reply.id, badVersion.reply.error?.code], [7, -32600])

      // Ids come back as sent: a string, and 0.
      const named = yield* mcp.ask(request("call-eight", "tools/call", {
        name: "search_memory",
        arguments: { query: "anything", limit: null }
      }))
      assert.strictEqual(named.reply.id, "call-eight")
      assert.isFalse(Schema.decodeUnknownSync(ToolResult)(named.reply.result).isError)
      const zero = yield* mcp.ask(request(0, "ping"))
      assert.deepStrictEqual([zero.reply.id, zero.reply.result], [0, {}])

      const run = yield* mcp.close
      assert.strictEqual(run.code, 0, run.stderr)
      for (const line of yield* mcp.written) {
        assert.notInclude(line, "_tag")
        assert.notInclude(line, "defect")
      }
      // At most one line per fault: the five protocol errors (the tools' refusals are answers).
      assert.isAtMost(faultLines(run.stderr).length, 5, run.stderr)
    }))
})
