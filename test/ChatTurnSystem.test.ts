/**
 * `ChatTurn`'s system prompt (stored once as the conversation's leading system message; a different
 * one later becomes the conversation's current one, never failing a turn), the recall tools merged with an app's toolkit in one expression and bound to
 * the turn's conversation by the turn itself, and the same toolkit with `@effect/ai`'s `Chat`
 * (`RecallToolkit.bind`). Against the fake OpenAI server, streamed turns included.
 */
import { Chat, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import * as ChatMemoryTest from "../src/layers/ChatMemoryTest.js"
import * as ChatTurn from "../src/layers/ChatTurn.js"
import * as RecallToolkit from "../src/layers/RecallToolkit.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import * as Fake from "./fixtures/fakeOpenAi.js"
import { agentModel, Weather, WeatherLive } from "./fixtures/weather.js"

/** The memory, the weather tool's handler (not the recall tools'), and the real model on the fake server. */
const world = (script: Fake.Script) => Layer.mergeAll(ChatMemoryTest.layer(), WeatherLive, agentModel(script))

const system = "You are the travel desk's assistant."

/** The system messages of each request the server received, as their texts. */
const systemsSent = Effect.map(
  Effect.flatMap(Fake.FakeOpenAi, (fake) => fake.requests),
  (requests) =>
    requests.map((request) =>
      (request.body.input ?? []).flatMap((message) =>
        message.role === "system" && typeof message.content === "string" ? [message.content] : []
      )
    )
)

// In one expression, with no handlers for the recall tools anywhere: the turn binds them.
const AgentToolkit = Toolkit.merge(Weather, RecallToolkit.toolkit)

describe("ChatTurn: the system prompt", () => {
  it.scoped("stored once as the leading system message, sent on every turn, checked after", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const first = yield* ChatTurn.generateText("c", { system, prompt: "Hello!" })
      const second = yield* ChatTurn.generateText("c", { system, prompt: "Still there?" })
      assert.deepStrictEqual(first.messages.map((message) => [message.seq, message.role]), [
        [1, "system"],
        [2, "user"],
        [3, "assistant"]
      ])
      assert.deepStrictEqual(second.messages.map((message) => message.role), ["user", "assistant"])
      const stored = yield* memory.getMessages("c")
      assert.deepStrictEqual(stored.filter((message) => message.role === "system").map((m) => m.content), [system])
      assert.deepStrictEqual(yield* systemsSent, [[system], [system]])

      // Left out, the stored one is used.
      yield* ChatTurn.generateText("c", { prompt: "Thanks." })
      assert.deepStrictEqual((yield* systemsSent).at(-1), [system])
      assert.strictEqual((yield* memory.getMessages("c")).length, stored.length + 2)
    }).pipe(Effect.provide(world(Fake.text("Hi!")))))

  it.scoped("a system prompt that changes between turns: no failure, the new one sent and shown, the old turns kept", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const pirate = "You are a pirate."
      yield* ChatTurn.generateText("c", { system, prompt: "Hello!" })
      const before = yield* memory.getContext("c")
      const changed = yield* ChatTurn.generateText("c", { system: pirate, prompt: "Hi" })
      // Only the exchange is stored: the change is in the conversation's settings, with its time.
      assert.deepStrictEqual(changed.messages.map((message) => message.role), ["user", "assistant"])
      yield* Stream.runDrain(ChatTurn.streamText("c", { system: pirate, prompt: "Still a pirate?" }))
      yield* ChatTurn.generateText("c", { prompt: "And now?" })
      assert.deepStrictEqual(yield* systemsSent, [[system], [pirate], [pirate], [pirate]])
      const settings = yield* memory.getSettings("c")
      assert.deepStrictEqual(settings.systemPrompts?.map((prompt) => prompt.text), [pirate])
      // The context shows the current one; the stored log keeps the first and every turn.
      const after = yield* memory.getContext("c")
      assert.deepStrictEqual(after.system.map((message) => message.content), [pirate])
      const stored = yield* memory.getMessages("c")
      assert.deepStrictEqual(stored.filter((m) => m.role === "system").map((m) => m.content), [system])
      assert.deepStrictEqual(stored.filter((m) => m.role === "user").map((m) => m.content), [
        "Hello!",
        "Hi",
        "Still a pirate?",
        "And now?"
      ])
      // The cache-stable prefix changes with it, as at a fold.
      assert.notStrictEqual(after.prefixVersion, before.prefixVersion)
    }).pipe(Effect.provide(world(Fake.text("Hi!")))))

  it.scoped("a conversation that started without one gets it on a later turn, streamed or not", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* ChatTurn.generateText("c", { prompt: "Hello!" })
      yield* Stream.runDrain(ChatTurn.streamText("c", { system, prompt: "Hi" }))
      yield* ChatTurn.generateText("c", { system, prompt: "Hi again" })
      assert.deepStrictEqual(yield* systemsSent, [[], [system], [system]])
      assert.lengthOf((yield* memory.getSettings("c")).systemPrompts ?? [], 1)
      assert.strictEqual((yield* memory.getMessages("c")).length, 6)
    }).pipe(Effect.provide(world(Fake.text("Hi!")))))

  it.scoped("streamText stores it too, and ends with the stored messages", () =>
    Effect.gen(function*() {
      const parts = yield* ChatTurn.streamText("s", { system, prompt: "Hello!" }).pipe(
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray)
      )
      const deltas = parts.flatMap((part) => part.type === "text-delta" ? [part.delta] : [])
      assert.strictEqual(deltas.join(""), "Hi! How can I help?")
      const end = parts[parts.length - 1]
      assert.strictEqual(end?.type, "turn-end")
      if (end?.type !== "turn-end") return
      assert.strictEqual(end.text, "Hi! How can I help?")
      assert.deepStrictEqual(end.messages.map((message) => [message.role, message.content]), [
        ["system", system],
        ["user", "Hello!"],
        ["assistant", "Hi! How can I help?"]
      ])
      assert.deepStrictEqual(end.messages, yield* (yield* ChatMemoryService).getMessages("s"))
      assert.strictEqual(end.context.conversationId, "s")
      assert.deepStrictEqual(yield* systemsSent, [[system]])
    }).pipe(Effect.provide(world(Fake.text("Hi! How can I help?")))))
})

describe("ChatTurn: the recall tools with the app's own", () => {
  it.scoped("merged in one expression; the turn binds them to its conversation", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      yield* (yield* ChatMemoryService).addMessages("other", [{ role: "user", content: "Weather in Lima?" }])
      const first = yield* ChatTurn.generateText("trip", { prompt: "Weather in Paris?", toolkit: AgentToolkit })
      const second = yield* Stream.runCollect(
        ChatTurn.streamText("trip", { prompt: "Which city did I ask about?", toolkit: AgentToolkit })
      )
      assert.strictEqual(first.text, "Sunny in Paris.")
      const end = Chunk.last(second)
      assert.strictEqual(end._tag === "Some" && end.value.type === "turn-end" ? end.value.text : "", "Paris.")
      // search_memory ran over "trip" (the first turn), not over "other".
      const requests = yield* fake.requests
      const output = Fake.toolOutputs(requests[3] ?? requests[0] ?? none).at(-1)
      assert.strictEqual(output?.callId, "call_2")
      assert.include(output?.output, "Weather in Paris?")
      assert.notInclude(output?.output, "Lima")
    }).pipe(Effect.provide(world(Fake.sequence(
      Fake.functionCall("get_weather", { location: "Paris", unit: "celsius" }, "call_1"),
      Fake.text("Sunny in Paris."),
      Fake.functionCall("search_memory", { query: "weather city", limit: null }, "call_2"),
      Fake.text("Paris.")
    )))))

  it.scoped("with @effect/ai's Chat: RecallToolkit.bind gives the toolkit for one conversation", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("c", [
        { role: "user", content: "My booking is TRV-4411." },
        { role: "assistant", content: "Noted." }
      ])
      const chat = yield* Chat.empty
      const response = yield* chat.generateText({
        prompt: "What was my booking?",
        toolkit: RecallToolkit.bind(AgentToolkit, "c")
      })
      const [result] = response.toolResults
      assert.strictEqual(result?.name, "search_memory")
      assert.include(JSON.stringify(result?.result), "TRV-4411")
    }).pipe(Effect.provide(world(Fake.functionCall("search_memory", { query: "booking", limit: null })))))
})

const none: Fake.RecordedRequest = { method: "", url: "", headers: {}, body: {}, rawBody: "" }
