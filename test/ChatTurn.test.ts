/**
 * `ChatTurn.generateText`: a tool-using agent over the memory, three turns against the fake OpenAI
 * server with nothing but the helper: each turn's context (summary, recent turns, a recalled one),
 * the tool round trips replayed byte for byte, the exchanges stored, the summary written in the
 * background. Then a turn without tools, the step limit, the refusals that call no model, and the
 * streamed turn over a scripted `LanguageModel`.
 */
import { LanguageModel, type Prompt, type Response } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Context, Effect, Layer, Ref, Stream } from "effect"
import { summaryText } from "../src/domain/internal/contextText.js"
import * as ChatMemoryTest from "../src/layers/ChatMemoryTest.js"
import * as ChatTurn from "../src/layers/ChatTurn.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import * as Fake from "./fixtures/fakeOpenAi.js"
import { agentModel, Weather, WeatherLive } from "./fixtures/weather.js"

/**
 * A memory whose budget holds the summary, one turn and one recalled turn (a turn of this agent
 * is about 85 tokens, the recalled block's heading about 30): the second turn makes a
 * summarization of the first due. The stable view shows the unsummarized turns only, so the first
 * turn, summarized, comes back by recall (the full view would show it verbatim: the whole
 * conversation fits).
 */
const Memory = ChatMemoryTest.layer({
  view: "stable",
  kRawTurns: 1,
  tokenBudget: 260,
  summaryTokenCap: 40,
  chunkSummarizeThreshold: 150,
  recallTokenBudget: 0.55
})

const world = (script: Fake.Script) => Layer.mergeAll(Memory, WeatherLive, agentModel(script))

const none: Fake.RecordedRequest = { method: "", url: "", headers: {}, body: {}, rawBody: "" }

/** The request's items of one type, as the server received them (JSON text, to compare bytes). */
const itemsOf = (request: Fake.RecordedRequest | undefined, type: string): ReadonlyArray<string> =>
  Fake.inputItems(request ?? none).flatMap((item) => "type" in item && item.type === type ? [JSON.stringify(item)] : [])

describe("ChatTurn.generateText", () => {
  it.scoped("three turns of a tool-using agent: memory, tools, background summary, nothing but the helper", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const memory = yield* ChatMemoryService
      const skill = yield* ScriptedSkill.ScriptedSkill
      const agent = (prompt: string) => ChatTurn.generateText("trip", { prompt, toolkit: Weather })

      const first = yield* agent("What is the weather in Paris?")
      const second = yield* agent("And in Oslo?")
      // For a deterministic third context: in an app the summary lands whenever it is ready.
      yield* memory.awaitIdle("trip")
      const third = yield* agent("Was Paris warmer than Oslo?")

      assert.deepStrictEqual([first.text, second.text, third.text], [
        "It is 21 °C and sunny in Paris.",
        "It is 4 °C with rain in Oslo.",
        "Yes: Paris (21 °C) was warmer than Oslo (4 °C)."
      ])
      assert.deepStrictEqual([first.steps.length, second.steps.length, third.steps.length], [2, 2, 1])

      // Every exchange stored as it came: the question, the call, the tool's JSON, the answer.
      const stored = yield* memory.getMessages("trip")
      assert.deepStrictEqual(stored.map((message) => [message.seq, message.role]), [
        [1, "user"],
        [2, "assistant"],
        [3, "tool"],
        [4, "assistant"],
        [5, "user"],
        [6, "assistant"],
        [7, "tool"],
        [8, "assistant"],
        [9, "user"],
        [10, "assistant"]
      ])
      assert.deepStrictEqual(third.messages.map((message) => message.seq), [9, 10])
      assert.deepStrictEqual(stored[6]?.metadata, {
        toolName: "get_weather",
        toolCallId: "call_2",
        contentFormat: "json"
      })

      // The first turn was summarized in the background, once; the third turn's context holds the
      // summary, the second turn verbatim, and the first turn recalled for the question.
      const calls = yield* skill.calls
      assert.deepStrictEqual(calls.map((call) => call.skill), ["summarize"])
      assert.strictEqual(third.context.summary, "- What is the weather in Paris?")
      assert.strictEqual(third.context.summarizedUpTo, 4)
      assert.deepStrictEqual(third.context.recent.map((message) => message.seq), [5, 6, 7, 8])
      assert.deepStrictEqual(third.context.recalled.map((turn) => [turn.fromSeq, turn.toSeq]), [[1, 4]])
      assert.isAtMost(third.context.tokenCount, 260)

      // The model saw exactly that: the summary, the second turn's tool round trip as the fresh
      // call sent it, the recalled turn, and the question.
      const requests = yield* fake.requests
      assert.strictEqual(requests.length, 5)
      const fresh = requests[3]
      const last = requests[4]
      // (The fresh request of the second turn also replays the first turn's call: its last ones are the fresh ones.)
      assert.deepStrictEqual(itemsOf(last, "function_call"), itemsOf(fresh, "function_call").slice(-1))
      assert.deepStrictEqual(itemsOf(last, "function_call_output"), itemsOf(fresh, "function_call_output").slice(-1))
      assert.deepStrictEqual(Fake.toolOutputs(last ?? none), [{
        callId: "call_2",
        output: "{\"location\":\"Oslo\",\"temperature\":4,\"conditions\":\"rain\",\"unit\":\"celsius\"}"
      }])
      const texts = Fake.userTexts(last ?? none)
      assert.strictEqual(texts[0], summaryText("- What is the weather in Paris?"))
      assert.include(texts[texts.length - 2], "[calls get_weather")
      assert.include(texts[texts.length - 2], "It is 21 °C and sunny in Paris.")
      assert.strictEqual(texts[texts.length - 1], "Was Paris warmer than Oslo?")
    }).pipe(Effect.provide(world(Fake.sequence(
      Fake.functionCall("get_weather", { location: "Paris", unit: "celsius" }, "call_1"),
      Fake.text("It is 21 °C and sunny in Paris."),
      Fake.functionCall("get_weather", { location: "Oslo", unit: "celsius" }, "call_2"),
      Fake.text("It is 4 °C with rain in Oslo."),
      Fake.text("Yes: Paris (21 °C) was warmer than Oslo (4 °C).")
    )))))

  it.scoped("without a toolkit: one model call, the exchange stored", () =>
    Effect.gen(function*() {
      const turn = yield* ChatTurn.generateText("plain", { prompt: "Hello!" })
      assert.strictEqual(turn.text, "Hi! How can I help?")
      assert.deepStrictEqual(turn.messages.map((message) => [message.role, message.content]), [
        ["user", "Hello!"],
        ["assistant", "Hi! How can I help?"]
      ])
    }).pipe(Effect.provide(world(Fake.text("Hi! How can I help?")))))

  it.scoped("unstoredTools: their calls and results reach the model but not the store", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const turn = yield* ChatTurn.generateText("u", {
        prompt: "Weather in Paris?",
        toolkit: Weather,
        unstoredTools: ["get_weather"]
      })
      assert.strictEqual(Fake.toolOutputs((yield* fake.requests)[1] ?? none).length, 1)
      assert.deepStrictEqual(turn.messages.map((message) => [message.role, message.content]), [
        ["user", "Weather in Paris?"],
        ["assistant", "Sunny, 21 °C."]
      ])
    }).pipe(Effect.provide(world(Fake.sequence(
      Fake.functionCall("get_weather", { location: "Paris", unit: "celsius" }),
      Fake.text("Sunny, 21 °C.")
    )))))

  it.scoped("a model that keeps calling tools is told not to on the last step; every call is stored", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const turn = yield* ChatTurn.generateText("loop", { prompt: "Weather?", toolkit: Weather, maxSteps: 2 })
      const requests = yield* fake.requests
      assert.strictEqual(requests.length, 2)
      assert.deepStrictEqual(
        requests.map((request) => JSON.parse(request.rawBody).tool_choice),
        ["auto", "none"]
      )
      // The fake calls the tool anyway: the call and its result are kept, the turn has no text.
      assert.strictEqual(turn.text, "")
      assert.deepStrictEqual(turn.messages.map((message) => message.role), [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool"
      ])
    }).pipe(Effect.provide(world(Fake.functionCall("get_weather", { location: "Oslo", unit: "celsius" })))))

  it.scoped("bad options are refused naming them, before any model call, and nothing is stored", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const memory = yield* ChatMemoryService
      const refusals = yield* Effect.forEach(
        [
          ChatTurn.generateText("c", { prompt: "" }),
          ChatTurn.generateText("c", { prompt: "Hi", maxSteps: 0 }),
          ChatTurn.generateText("c", { prompt: "a\u0000b" }),
          ChatTurn.generateText("", { prompt: "Hi" })
        ],
        (turn) =>
          Effect.map(Effect.flip(turn), (error) => error._tag === "DataValidationError" ? error.path : error._tag)
      )
      assert.deepStrictEqual(refusals, ["options.prompt", "options.maxSteps", "options.prompt", "conversationId"])
      assert.strictEqual((yield* fake.requests).length, 0)
      assert.strictEqual((yield* Effect.flip(memory.getMessages("c")))._tag, "ConversationNotFoundError")
    }).pipe(Effect.provide(world(Fake.text("unused")))))

  it.scoped("a failed model call stores nothing: the user can ask again", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const error = yield* Effect.flip(ChatTurn.generateText("c", { prompt: "Hi", toolkit: Weather }))
      assert.strictEqual(error._tag, "HttpResponseError")
      assert.strictEqual((yield* Effect.flip(memory.getMessages("c")))._tag, "ConversationNotFoundError")
    }).pipe(Effect.provide(world(() => Fake.error(400, "bad request", "invalid_request_error")))))
})

/** The prompts the scripted model was sent. */
class Sent extends Context.Tag("test/ChatTurn/Sent")<Sent, Ref.Ref<ReadonlyArray<Prompt.Prompt>>>() {}

/** A `LanguageModel` that streams the `n`th script on its `n`th call, and records the prompts. */
const streamingModel = (scripts: ReadonlyArray<ReadonlyArray<Response.StreamPartEncoded>>) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    Effect.gen(function*() {
      const sent = yield* Sent
      return yield* LanguageModel.make({
        generateText: () => Effect.dieMessage("the scripted model only streams"),
        streamText: (options) =>
          Stream.unwrap(Effect.map(
            Ref.updateAndGet(sent, (prompts) => [...prompts, options.prompt]),
            (prompts) => Stream.fromIterable(scripts[prompts.length - 1] ?? [])
          ))
      })
    })
  ).pipe(Layer.provideMerge(Layer.effect(Sent, Ref.make<ReadonlyArray<Prompt.Prompt>>([]))))

const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 }

describe("ChatTurn.streamText", () => {
  it.effect("the parts of every step stream out; the exchange is stored when the stream ends", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const sent = yield* Sent
      const parts = yield* ChatTurn.streamText("s", { prompt: "Weather in Paris?", toolkit: Weather }).pipe(
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray)
      )
      assert.deepStrictEqual(parts.map((part) => part.type), [
        "response-metadata",
        "tool-params-start",
        "tool-params-delta",
        "tool-params-end",
        "tool-call",
        "finish",
        "tool-result",
        "response-metadata",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "finish",
        "turn-end"
      ])
      // The last part: what generateText gives, once the exchange is stored.
      const end = parts[parts.length - 1]
      assert.strictEqual(end?.type, "turn-end")
      if (end?.type === "turn-end") {
        assert.strictEqual(end.text, "Sunny, 21 °C.")
        // Each call's parts, the tools' results after its finish.
        assert.deepStrictEqual(end.steps.map((step) => step.length), [7, 6])
        assert.strictEqual(end.context.conversationId, "s")
      }
      // The second call was sent the first one's call and result.
      const second = (yield* Ref.get(sent))[1]
      assert.deepStrictEqual(second?.content.map((message) => message.role), ["user", "assistant", "tool"])
      // Stored as one exchange, the deltas put together.
      const stored = yield* memory.getMessages("s")
      assert.deepStrictEqual(stored.map((message) => [message.role, message.content]), [
        ["user", "Weather in Paris?"],
        ["assistant", ""],
        ["tool", "{\"location\":\"Paris\",\"temperature\":21,\"conditions\":\"sunny\",\"unit\":\"celsius\"}"],
        ["assistant", "Sunny, 21 °C."]
      ])
      assert.deepStrictEqual(end?.type === "turn-end" ? end.messages : [], stored)
      assert.deepStrictEqual(stored[1]?.metadata.toolCalls?.map((call) => [call.id, call.paramsJson]), [
        ["call_1", "{\"location\":\"Paris\",\"unit\":\"celsius\"}"]
      ])
    }).pipe(Effect.provide(Layer.mergeAll(
      ChatMemoryTest.layer({ strategy: "noop" }),
      WeatherLive,
      streamingModel([
        [
          { type: "response-metadata", id: "resp_1" },
          { type: "tool-params-start", id: "call_1", name: "get_weather" },
          { type: "tool-params-delta", id: "call_1", delta: "{\"location\":\"Paris\",\"unit\":\"celsius\"}" },
          { type: "tool-params-end", id: "call_1" },
          { type: "tool-call", id: "call_1", name: "get_weather", params: { location: "Paris", unit: "celsius" } },
          { type: "finish", reason: "tool-calls", usage }
        ],
        [
          { type: "response-metadata", id: "resp_2" },
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "Sunny, " },
          { type: "text-delta", id: "t", delta: "21 °C." },
          { type: "text-end", id: "t" },
          { type: "finish", reason: "stop", usage }
        ]
      ])
    ))))

  it.effect("a stream that is not run to its end stores nothing", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const first = yield* ChatTurn.streamText("cut", { prompt: "Hi" }).pipe(Stream.take(2), Stream.runCollect)
      assert.strictEqual(Chunk.size(first), 2)
      assert.strictEqual((yield* Effect.flip(memory.getMessages("cut")))._tag, "ConversationNotFoundError")
    }).pipe(Effect.provide(Layer.mergeAll(
      ChatMemoryTest.layer({ strategy: "noop" }),
      streamingModel([[
        { type: "response-metadata", id: "resp_1" },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Hello" },
        { type: "text-end", id: "t" },
        { type: "finish", reason: "stop", usage }
      ]])
    ))))
})
