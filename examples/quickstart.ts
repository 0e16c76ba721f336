import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer } from "effect"
import { ChatMemory, ChatTurn } from "effect-chat-memory"

// A turn of a user's conversation, over what the memory holds of the user; the exchange is stored.
const say = (userId: string, conversationId: string, prompt: string) =>
  ChatTurn.generateText(conversationId, { userId, prompt, system: "You are a helpful assistant." }).pipe(
    Effect.flatMap((turn) => Console.log(`${conversationId}> ${turn.text}`))
  )

const Model = OpenAiLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
  Layer.provide(OpenAiClient.layerConfig({
    apiKey: Config.redacted("OPENAI_API_KEY"),
    apiUrl: Config.withDefault(Config.string("OPENAI_BASE_URL"), "https://api.openai.com/v1")
  })),
  Layer.provide(NodeHttpClient.layerUndici)
)

const program = Effect.gen(function*() {
  yield* say("ana", "monday", "Hi! My dog is called Biscuit.")
  yield* say("ana", "tuesday", "What is my dog called?") // a new conversation: it knows Biscuit
})

program.pipe(Effect.provide(Layer.merge(ChatMemory.layerConfig(), Model)), NodeRuntime.runMain)
