/**
 * The recall toolkit over the real memory: a tool-call round trip with the real OpenAI language
 * model against the local fake server, the conversation fixed by the handlers, and the refusals
 * (bad parameters by the schema, a bad range by a typed failure).
 */
import { AiError, LanguageModel, Prompt, Tool } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { withUserMessage } from "../src/layers/ai/ContextPrompt.js"
import * as ChatMemoryTest from "../src/layers/ChatMemoryTest.js"
import * as RecallTools from "../src/layers/internal/recallTools.js"
import * as RecallToolkit from "../src/layers/RecallToolkit.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { lookalikes } from "./contracts/UserStoreContract.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

const orderId = "ORD-2024-88417"
const otherOrderId = "ORD-5150-31337"

/** The opening turn names the order; thirty turns about something else follow. */
const conversation = [
  { role: "system" as const, content: "You are the warehouse's assistant." },
  { role: "user" as const, content: `Hi! My replacement compressor is order ${orderId}, please track it.` },
  { role: "assistant" as const, content: "Noted, I will keep an eye on it." },
  ...Array.from({ length: 30 }, (_, i) => [
    { role: "user" as const, content: `Question ${i + 1}: how far apart should pallets of crate type ${i} stand?` },
    { role: "assistant" as const, content: `About ${10 + i} centimetres for crate type ${i}.` }
  ]).flat()
]

/** The turn that holds the order: the user's message and its answer. */
const orderTurn = { fromSeq: 2, toSeq: 3 }

const SearchResult = Schema.parseJson(RecallTools.SearchMemory.successSchema)
const Failure = Schema.parseJson(RecallTools.ToolFailure)

/** The memory (fresh per test) with "c" and "other" stored, and the real model on the fake server. */
const world = (script: Fake.Script) =>
  Layer.mergeAll(
    ChatMemoryTest.layer(),
    Layer.unwrapEffect(
      Effect.map(Fake.FakeOpenAi, (fake) =>
        OpenAiLanguageModel.layer({ model: "agent-model" }).pipe(
          Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make(Fake.apiKey), apiUrl: fake.apiUrl })),
          Layer.provide(NodeHttpClient.layerUndici)
        ))
    ).pipe(Layer.provideMerge(Fake.layer(script)))
  )

const seed = Effect.gen(function*() {
  const memory = yield* ChatMemoryService
  yield* memory.addMessages("c", conversation)
  yield* memory.addMessages("other", [
    { role: "user", content: `Secret: my order is ${otherOrderId}.` },
    { role: "assistant", content: "Understood." },
    ...Array.from({ length: 80 }, (_, i) => ({ role: "user" as const, content: `other note ${i}` }))
  ])
})

/** One exchange of an agent over conversation "c": the model's tool calls are run, then the model is asked again. */
const ask = (question: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const context = yield* memory.getContext("c", { query: question })
    let prompt = withUserMessage(context, question)
    for (let step = 0; step < 4; step++) {
      const response = yield* LanguageModel.generateText({ prompt, toolkit: RecallToolkit.toolkit })
      if (response.toolCalls.length === 0) return response.text
      prompt = Prompt.merge(prompt, Prompt.fromResponseParts(response.content))
    }
    return "(too many tool calls)"
  }).pipe(Effect.provide(RecallToolkit.layer("c")))

/** A tool's answer when its user is not the conversation's. */
const refused = (operation: string) => ({
  error: `ChatMemoryService.${operation}: invalid options.userId: the conversation belongs to another user`
})

/** Parameters refused by a tool's schema: the toolkit fails with `MalformedOutput` (its signature does not say so). */
const isMalformed = (error: unknown): boolean => AiError.isAiError(error) && error._tag === "MalformedOutput"

/** A model that quotes the order id it finds in the tool result it was sent. */
const quoteOrderId: Fake.Script = (request, n) => {
  const output = Fake.toolOutputs(request)[0]?.output ?? ""
  const found = /ORD-\d{4}-\d{5}/.exec(output)?.[0] ?? "unknown"
  return Fake.text(`Your order id is ${found}.`)(request, n)
}

describe("RecallToolkit", () => {
  it.scoped("a tool-call round trip: search_memory finds the old turn, the model gets it and quotes it", () =>
    Effect.gen(function*() {
      yield* seed
      const fake = yield* Fake.FakeOpenAi
      const answer = yield* ask("Which order did I ask you to track at the start?")
      assert.strictEqual(answer, `Your order id is ${orderId}.`)

      const [first, second, ...rest] = yield* fake.requests
      assert.strictEqual(rest.length, 0)
      // The model was offered both tools, with their schemas and no conversation parameter.
      const offered = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({
        tools: Schema.Array(Schema.Struct({
          name: Schema.String,
          parameters: Schema.Struct({ required: Schema.Array(Schema.String) })
        }))
      })))(first?.rawBody)
      assert.deepStrictEqual(offered.tools.map((tool) => [tool.name, tool.parameters.required]), [
        ["search_memory", ["query", "limit"]],
        ["read_turns", ["fromSeq", "toSeq"]]
      ])
      // The second request carries the call and its result: the turn that holds the order id.
      const items = second === undefined ? [] : Fake.inputItems(second)
      const call = items.find((item) => "type" in item && item.type === "function_call")
      assert.deepInclude(call, { name: "search_memory", call_id: "call_1" })
      const outputs = second === undefined ? [] : Fake.toolOutputs(second)
      assert.strictEqual(outputs.length, 1)
      assert.strictEqual(outputs[0]?.callId, "call_1")
      const result = Schema.decodeUnknownSync(SearchResult)(outputs[0]?.output)
      const turn = result.turns.find((t) => t.messages.some((m) => m.text.includes(orderId)))
      assert.isDefined(turn)
      assert.deepStrictEqual([turn?.fromSeq, turn?.toSeq], [orderTurn.fromSeq, orderTurn.toSeq])
      assert.deepStrictEqual(turn?.messages.map((m) => [m.seq, m.role]), [[2, "user"], [3, "assistant"]])
      assert.match(turn?.time ?? "", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      assert.notInclude(outputs[0]?.output, otherOrderId)
    }).pipe(
      Effect.provide(
        world(Fake.sequence(Fake.functionCall("search_memory", { query: orderId, limit: 3 }), quoteOrderId))
      )
    ))

  it.scoped("the tools reach only the conversation their handlers were built for", () =>
    Effect.gen(function*() {
      yield* seed
      const tools = yield* RecallToolkit.toolkit
      // The other conversation's order is not found, though it is stored.
      const secret = yield* tools.handle("search_memory", { query: "secret", limit: null })
      assert.deepStrictEqual([secret.isFailure, secret.encodedResult], [false, { turns: [] }])
      const search = yield* tools.handle("search_memory", { query: otherOrderId, limit: 10 })
      assert.isFalse(search.isFailure)
      assert.notInclude(JSON.stringify(search.encodedResult), otherOrderId)
      const own = yield* tools.handle("search_memory", { query: orderId, limit: null })
      assert.isTrue(JSON.stringify(own.encodedResult).includes(orderId))
      // Seqs that exist only in the other conversation (82 messages; "c" has 63) read nothing.
      const beyond = yield* tools.handle("read_turns", { fromSeq: 70, toSeq: 72 })
      assert.deepStrictEqual([beyond.isFailure, beyond.encodedResult], [true, {
        error: "no stored messages from seq 70 to seq 72"
      }])
      // A conversation cannot be named: no parameter says one, and an extra one is refused.
      for (
        const schema of [Tool.getJsonSchema(RecallTools.SearchMemory), Tool.getJsonSchema(RecallTools.ReadTurns)]
      ) {
        const properties = "properties" in schema ? Object.keys(schema.properties) : []
        assert.isFalse(properties.some((name) => /conversation/i.test(name)), properties.join())
      }
      const smuggled = { fromSeq: 1, toSeq: 3, conversationId: "other" }
      assert.isTrue(isMalformed(yield* Effect.flip(tools.handle("read_turns", smuggled))))
      // The same call without it reads "c".
      const read = yield* tools.handle("read_turns", { fromSeq: 1, toSeq: 3 })
      assert.isFalse(read.isFailure)
      assert.include(JSON.stringify(read.encodedResult), orderId)
      // Handlers for an invalid conversation id are never built.
      const invalid = yield* Effect.flip(Layer.build(RecallToolkit.layer("")))
      assert.strictEqual(invalid._tag, "DataValidationError")
    }).pipe(Effect.provide(RecallToolkit.layer("c")), Effect.provide(world(Fake.text("unused")))))

  it.scoped("tools bound to a user read nothing of a conversation of another user, lookalike ids included", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("ana-chat", [
        { role: "user", content: `My passport is XP-1234, order ${orderId}.` },
        { role: "assistant", content: "Noted." }
      ], { userId: "ana" })
      for (const user of ["bob", ...lookalikes("ana")]) {
        const tools = yield* Effect.provide(RecallToolkit.toolkit, RecallToolkit.layer("ana-chat", { userId: user }))
        const read = yield* tools.handle("read_turns", { fromSeq: 1, toSeq: 2 })
        const search = yield* tools.handle("search_memory", { query: `passport ${orderId}`, limit: null })
        assert.deepStrictEqual(
          [read.isFailure, read.encodedResult, search.isFailure, search.encodedResult],
          [true, refused("getMessages"), true, refused("searchMemory")],
          user
        )
      }
      // Its own user reads it.
      const own = yield* Effect.provide(RecallToolkit.toolkit, RecallToolkit.layer("ana-chat", { userId: "ana" }))
      assert.include(
        JSON.stringify((yield* own.handle("read_turns", { fromSeq: 1, toSeq: 2 })).encodedResult),
        "XP-1234"
      )
    }).pipe(Effect.provide(world(Fake.text("unused")))))

  it.scoped("read_turns: a bad range is a typed failure, bad parameters are refused by the schema", () =>
    Effect.gen(function*() {
      yield* seed
      const tools = yield* RecallToolkit.toolkit
      const failure = (params: { readonly fromSeq: number; readonly toSeq: number }) =>
        Effect.map(tools.handle("read_turns", params), (result) => {
          assert.isTrue(result.isFailure)
          return Schema.decodeUnknownSync(RecallTools.ToolFailure)(result.encodedResult).error
        })
      assert.strictEqual(yield* failure({ fromSeq: 9, toSeq: 2 }), "toSeq (2) must not be below fromSeq (9)")
      assert.strictEqual(
        yield* failure({ fromSeq: 1, toSeq: 51 }),
        "at most 50 messages per call: seq 1-51 spans 51"
      )
      const fifty = yield* tools.handle("read_turns", { fromSeq: 1, toSeq: 50 })
      assert.isFalse(fifty.isFailure)
      assert.strictEqual("messages" in fifty.result ? fifty.result.messages.length : 0, 50)

      // Out of the schema: refused before the handler runs.
      for (const params of [{ fromSeq: 0, toSeq: 3 }, { fromSeq: 1.5, toSeq: 3 }, { fromSeq: 2, toSeq: -1 }]) {
        assert.isTrue(isMalformed(yield* Effect.flip(tools.handle("read_turns", params))), JSON.stringify(params))
      }
      for (
        const params of [{ query: orderId, limit: 11 }, { query: orderId, limit: 0 }, { query: "  ", limit: null }]
      ) {
        assert.isTrue(isMalformed(yield* Effect.flip(tools.handle("search_memory", params))), JSON.stringify(params))
      }

      // The MCP toolkit, served by the same handlers, fails in the error channel instead.
      const mcp = yield* RecallTools.mcpToolkit
      const error = yield* Effect.flip(mcp.handle("read_turns", { fromSeq: 9, toSeq: 2 }))
      assert.deepStrictEqual(error, { error: "toSeq (2) must not be below fromSeq (9)" })
    }).pipe(Effect.provide(RecallToolkit.layer("c")), Effect.provide(world(Fake.text("unused")))))

  it.scoped("through the model, a refused read_turns goes back as the tool's result, and the model carries on", () =>
    Effect.gen(function*() {
      yield* seed
      const fake = yield* Fake.FakeOpenAi
      const answer = yield* ask("Show me the first messages")
      assert.strictEqual(answer, "Sorry, I could not read those.")
      const [, second] = yield* fake.requests
      const output = second === undefined ? undefined : Fake.toolOutputs(second)[0]?.output
      assert.deepStrictEqual(Schema.decodeUnknownSync(Failure)(output), {
        error: "toSeq (2) must not be below fromSeq (9)"
      })
    }).pipe(Effect.provide(world(Fake.sequence(
      Fake.functionCall("read_turns", { fromSeq: 9, toSeq: 2 }),
      Fake.text("Sorry, I could not read those.")
    )))))
})
