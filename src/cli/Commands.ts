/**
 * The commands of the command line: their arguments, flags and descriptions. What a command does
 * is loaded when it runs, so `--help` and each command load only what they use.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { StrategyName } from "../domain/ConversationSettings.js"
import * as Settings from "./Settings.js"

/** The name and version the program reports, in `--version` and `mcp`'s `initialize` answer. */
export const program = { name: "effect-chat-memory", version: "0.2.0" } as const

/** What a command that asks a model needs: a key, or the URL of an OpenAI-compatible server. */
const modelServer = `${Settings.variables.openAiApiKey.name} or ${Settings.variables.openAiBaseUrl.name}`

const conversationId = Args.text({ name: "conversationId" }).pipe(Args.withDescription("the stored conversation's id"))
const json = Options.boolean("json").pipe(Options.withDescription("print JSON"))

/** `--user`: the user a conversation belongs to, bound on its first write. */
const user = (description: string) =>
  Options.text("user").pipe(Options.withPseudoName("id"), Options.withDescription(description), Options.optional)

const replay = Command.make(
  "replay",
  {
    transcript: Args.text({ name: "transcript" }).pipe(
      Args.withDescription("JSONL of { role, content, metadata? } or a JSON array (default: the bundled conversation)"),
      Args.optional
    ),
    conversation: Options.text("conversation").pipe(
      Options.withDescription("the conversation id to store it under (an earlier one is cleared)"),
      Options.withDefault("replay")
    ),
    user: user(
      "the user its conversations belong to (a transcript of several conversations: replay-user by default)"
    ),
    json: Options.boolean("json").pipe(Options.withDescription("print the figures as JSON")),
    ...Settings.flags
  },
  ({ conversation, json, transcript, user, ...flags }) =>
    Effect.flatMap(
      Effect.promise(() => import("./Replay.js")),
      (Replay) => Replay.replay({ conversation, flags, json, transcript, user })
    )
).pipe(Command.withDescription("replay a transcript through the memory and show the context and stats"))

const evaluate = Command.make(
  "eval",
  {
    questions: Args.text({ name: "questions" }).pipe(
      Args.withDescription("a questions file (default: the bundled conversation's)"),
      Args.optional
    ),
    strategies: Options.text("strategies").pipe(
      Options.withDescription(`comma-separated, from ${StrategyName.literals.join(", ")}`),
      Options.withDefault("sliding-window,summarization,hierarchical")
    ),
    askModel: Options.text("ask-model").pipe(
      Options.withDescription(
        `also ask this model each question over the context and grade its reply (needs ${modelServer})`
      ),
      Options.optional
    ),
    user: user("the user the transcript's conversations are replayed as (default: eval-user)"),
    json: Options.boolean("json").pipe(Options.withDescription("print the results as JSON")),
    ...Settings.flags
  },
  ({ askModel, json, questions, strategies, user, ...flags }) =>
    Effect.flatMap(
      Effect.promise(() => import("./Eval.js")),
      (Eval) => Eval.run({ askModel, flags, json, questions, strategies, user })
    )
).pipe(Command.withDescription("measure what the memory keeps: questions asked long after their answer was said"))

/** The commands on a stored conversation, whose implementation is `./Conversations.js`. */
const conversations = () => Effect.promise(() => import("./Conversations.js"))

const context = Command.make(
  "context",
  {
    conversationId,
    json,
    query: Options.text("query").pipe(
      Options.withDescription("what the next message asks: recalls the older turns that match it"),
      Options.optional
    ),
    user: user("the conversation's user; for an id not stored yet, what a new conversation of the user gets"),
    ...Settings.readingFlags
  },
  ({ conversationId, json, query, user, ...flags }) =>
    Effect.flatMap(
      conversations(),
      (Conversations) => Conversations.context({ conversationId, flags, json, query, user })
    )
).pipe(Command.withDescription("show the context the model would get next"))

const messages = Command.make(
  "messages",
  {
    conversationId,
    limit: Options.integer("limit").pipe(Options.withDescription("at most this many (the newest)"), Options.optional),
    before: Options.integer("before").pipe(Options.withDescription("only messages below this seq"), Options.optional),
    json,
    ...Settings.readingFlags
  },
  ({ before, conversationId, json, limit, ...flags }) =>
    Effect.flatMap(
      conversations(),
      (Conversations) => Conversations.messages({ before, conversationId, flags, json, limit })
    )
).pipe(Command.withDescription("list stored messages, oldest first"))

const inspect = Command.make(
  "inspect",
  { conversationId, json, ...Settings.readingFlags },
  ({ conversationId, json, ...flags }) =>
    Effect.flatMap(conversations(), (Conversations) => Conversations.inspect({ conversationId, flags, json }))
).pipe(Command.withDescription("show the summary state, facts, cursor and summarization records"))

const clear = Command.make(
  "clear",
  { conversationId, ...Settings.readingFlags },
  ({ conversationId, ...flags }) =>
    Effect.flatMap(conversations(), (Conversations) => Conversations.clear({ conversationId, flags }))
).pipe(Command.withDescription("delete a conversation: messages, summary state, records and settings"))

const chat = Command.make(
  "chat",
  {
    conversationId: Args.text({ name: "conversationId" }).pipe(
      Args.withDescription("the conversation to continue, or to start"),
      Args.withDefault("chat")
    ),
    model: Options.text("model").pipe(
      Options.withDescription("the chat model (default: AGENT_MODEL, else gpt-4o-mini)"),
      Options.optional
    ),
    system: Options.text("system").pipe(
      Options.withDescription("the system prompt of a new conversation"),
      Options.withDefault(
        "You are a helpful, concise assistant. Use the known facts and the summary of the earlier conversation when they apply."
      )
    ),
    user: user("the user the conversation belongs to: a new one knows what the user said in earlier ones"),
    ...Settings.flags
  },
  ({ conversationId, model, system, user, ...flags }) =>
    Effect.flatMap(
      Effect.promise(() => import("./Chat.js")),
      (Chat) => Chat.chat({ conversationId, flags, model, system, user })
    )
).pipe(Command.withDescription(`talk with the configured model, memory on (needs ${modelServer})`))

const mcp = Command.make(
  "mcp",
  {
    conversation: Options.text("conversation").pipe(
      Options.withPseudoName("id"),
      Options.withDescription("the conversation the tools search and read (they can reach no other)")
    ),
    user: user("the conversation's user: search_memory searches the user's other conversations too"),
    ...Settings.flags
  },
  ({ conversation, user, ...flags }) =>
    Effect.flatMap(
      Effect.promise(() => import("./Mcp.js")),
      (Mcp) => Mcp.serve({ conversation, flags, server: program, user })
    )
).pipe(Command.withDescription("serve the recall tools of one conversation over stdio (Model Context Protocol)"))

/** The program: its commands, in the order its help lists them. */
export const root = Command.make(program.name).pipe(
  Command.withDescription("conversation memory for LLM agents: facts, a running summary and recent turns in a budget"),
  Command.withSubcommands([replay, evaluate, context, messages, inspect, clear, chat, mcp])
)
