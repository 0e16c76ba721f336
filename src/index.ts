/**
 * effect-chat-memory: long-running conversation memory for Effect-based LLM agents.
 *
 * @since 0.1.0
 */

// Deprecated names, kept for one release (exported at the end).
import * as ChatMemoryVariablesModule from "./layers/ChatMemoryConfig.js"
import * as MemoryRepositoryModule from "./layers/store/MemoryStore.js"
import * as PgRepositoryModule from "./layers/store/PgStore.js"
import * as SqlRepositoryModule from "./layers/store/SqlStore.js"
import * as StorageModule from "./layers/store/Store.js"
import * as SettingsRepositoryModule from "./services/SettingsStore.js"
import * as SummaryRepositoryModule from "./services/SummaryStore.js"
import * as SummarizationOptionsModule from "./strategies/SummarizationStrategy.js"

/**
 * The settings a context is built with, one name and one schema each.
 *
 * @since 0.1.0
 */
export * as ContextSettings from "./domain/ContextSettings.js"

/**
 * The key of a conversation: a branded, validated string.
 *
 * @since 0.1.0
 */
export * as ConversationId from "./domain/ConversationId.js"

/**
 * Per-conversation overrides of the memory's defaults, and the strategy names.
 *
 * @since 0.1.0
 */
export * as ConversationSettings from "./domain/ConversationSettings.js"

/**
 * What the memory of one conversation holds and costs (`ChatMemoryService.stats`).
 *
 * @since 0.1.0
 */
export * as ConversationStats from "./domain/ConversationStats.js"

/**
 * One conversation of a user as a list shows it.
 *
 * @since 0.2.0
 */
export * as ConversationEntry from "./domain/ConversationEntry.js"

/**
 * Key/value facts the memory keeps verbatim.
 *
 * @since 0.1.0
 */
export * as Fact from "./domain/Fact.js"

/**
 * What `getContext` returns: the messages for the next model call, within a budget.
 *
 * @since 0.1.0
 */
export * as MemoryContext from "./domain/MemoryContext.js"

/**
 * The events the memory emits.
 *
 * @since 0.1.0
 */
export * as MemoryEvent from "./domain/MemoryEvent.js"

/**
 * Messages: what callers add and what the store keeps.
 *
 * @since 0.1.0
 */
export * as Message from "./domain/Message.js"

/**
 * A conversation's summary state, and the record of each summarization run.
 *
 * @since 0.1.0
 */
export * as SummaryState from "./domain/SummaryState.js"

/**
 * Turns: a user message and everything that answers it.
 *
 * @since 0.1.0
 */
export * as Turn from "./domain/Turn.js"

/**
 * What erasing a user removed.
 *
 * @since 0.2.0
 */
export * as UserErasure from "./domain/UserErasure.js"

/**
 * What is known about a user across the user's conversations.
 *
 * @since 0.2.0
 */
export * as UserFact from "./domain/UserFact.js"

/**
 * The key of a user: a branded, validated string the app chooses.
 *
 * @since 0.2.0
 */
export * as UserId from "./domain/UserId.js"

/**
 * The errors the memory's service fails with.
 *
 * @since 0.1.0
 */
export * as ChatMemoryError from "./errors/ChatMemoryError.js"

/**
 * A conversation that does not exist.
 *
 * @since 0.1.0
 */
export * as ConversationNotFoundError from "./errors/ConversationNotFoundError.js"

/**
 * Bad input, refused before anything is stored, naming the field.
 *
 * @since 0.1.0
 */
export * as DataValidationError from "./errors/DataValidationError.js"

/**
 * A failure of the store.
 *
 * @since 0.1.0
 */
export * as RepositoryError from "./errors/RepositoryError.js"

/**
 * A failure of a model skill.
 *
 * @since 0.1.0
 */
export * as SkillExecutionError from "./errors/SkillExecutionError.js"

/**
 * The policy port: what to do after messages are added, how to assemble a context.
 *
 * @since 0.1.0
 */
export * as MemoryManagementStrategy from "./services/MemoryManagementStrategy.js"

/**
 * The message index port: lexical search and embedding vectors of a conversation's messages.
 *
 * @since 0.1.0
 */
export * as MessageIndex from "./services/MessageIndex.js"

/**
 * The conversation log port: appends with store-assigned seqs, range reads, deletion.
 *
 * @since 0.1.0
 */
export * as RepositoryService from "./services/RepositoryService.js"

/**
 * The settings port: each conversation's overrides of the memory's defaults.
 *
 * @since 0.2.0
 */
export * as SettingsStore from "./services/SettingsStore.js"

/**
 * The model skills port: summarize, extract facts.
 *
 * @since 0.1.0
 */
export * as SkillService from "./services/SkillService.js"

/**
 * The summarization lease port: one summarization of a conversation at a time.
 *
 * @since 0.1.0
 */
export * as SummarizationLease from "./services/SummarizationLease.js"

/**
 * The summary state port: compare-and-set of a conversation's summary, and its records.
 *
 * @since 0.2.0
 */
export * as SummaryStore from "./services/SummaryStore.js"

/**
 * The port that counts tokens.
 *
 * @since 0.1.0
 */
export * as TokenCounter from "./services/TokenCounter.js"

/**
 * The user port: a user's facts, conversations, search and erasure.
 *
 * @since 0.2.0
 */
export * as UserStore from "./services/UserStore.js"

/**
 * The hierarchical strategy: facts, a running narrative and the newest turns.
 *
 * @since 0.1.0
 */
export * as HierarchicalStrategy from "./strategies/HierarchicalStrategy.js"

/**
 * The strategy that does nothing: the context is the whole conversation.
 *
 * @since 0.1.0
 */
export * as NoopStrategy from "./strategies/NoopStrategy.js"

/**
 * Recall: older turns brought back for the current question, verbatim.
 *
 * @since 0.2.0
 */
export * as Recall from "./strategies/Recall.js"

/**
 * The sliding-window strategy: the newest turns that fit the budget.
 *
 * @since 0.1.0
 */
export * as SlidingWindowStrategy from "./strategies/SlidingWindowStrategy.js"

/**
 * The summarization strategy: a running summary in front of the newest turns.
 *
 * @since 0.1.0
 */
export * as SummarizationStrategy from "./strategies/SummarizationStrategy.js"

/**
 * The approximate token counter: one token per four characters.
 *
 * @since 0.1.0
 */
export * as ApproximateTokenCounter from "./layers/tokens/ApproximateTokenCounter.js"

/**
 * The memory, from one name: its tag, its layers, the live and test compositions.
 *
 * @since 0.1.0
 */
export * as ChatMemory from "./layers/ChatMemory.js"

/**
 * The configuration of the composed memory: options, defaults, the environment table.
 *
 * @since 0.1.0
 */
export * as ChatMemoryConfig from "./layers/ChatMemoryConfig.js"

/**
 * One turn of an agent with memory over `@effect/ai`: context, model, then the exchange stored.
 *
 * @since 0.1.0
 */
export * as ChatTurn from "./layers/ChatTurn.js"

/**
 * A memory context as `@effect/ai` prompt messages.
 *
 * @since 0.1.0
 */
export * as ContextPrompt from "./layers/ai/ContextPrompt.js"

/**
 * The offline skill: no model, deterministic.
 *
 * @since 0.1.0
 */
export * as ExtractiveSkill from "./layers/skills/ExtractiveSkill.js"

/**
 * The skills over any `@effect/ai` language model.
 *
 * @since 0.1.0
 */
export * as LanguageModelSkill from "./layers/skills/LanguageModelSkill.js"

/**
 * The in-memory store: every storage port over one `Ref`.
 *
 * @since 0.2.0
 */
export * as MemoryStore from "./layers/store/MemoryStore.js"

/**
 * The skills over OpenAI or a compatible server.
 *
 * @since 0.1.0
 */
export * as OpenAiSkill from "./layers/skills/OpenAiSkill.js"

/**
 * An `SqlClient` over PGlite, PostgreSQL in WASM, in-process.
 *
 * @since 0.1.0
 */
export * as PgliteClient from "./layers/store/PgliteClient.js"

/**
 * The SQL store on its drivers: PostgreSQL and PGlite.
 *
 * @since 0.2.0
 */
export * as PgStore from "./layers/store/PgStore.js"

/**
 * What the language-model skills send, for a skill of your own.
 *
 * @since 0.1.0
 */
export * as Prompts from "./layers/skills/Prompts.js"

/**
 * The recall tools of an agent: `search_memory` and `read_turns`.
 *
 * @since 0.1.0
 */
export * as RecallToolkit from "./layers/RecallToolkit.js"

/**
 * A scripted skill for tests.
 *
 * @since 0.1.0
 */
export * as ScriptedSkill from "./layers/skills/ScriptedSkill.js"

/**
 * The SQL store over the generic `SqlClient` of `@effect/sql`.
 *
 * @since 0.2.0
 */
export * as SqlStore from "./layers/store/SqlStore.js"

/**
 * A store as one unit: the storage ports one adapter provides together.
 *
 * @since 0.2.0
 */
export * as Store from "./layers/store/Store.js"

/**
 * @since 0.1.0
 * @category deprecated
 * @deprecated Use `ChatMemoryConfig`: its `variables` is the environment table.
 */
export import ChatMemoryVariables = ChatMemoryVariablesModule

/**
 * @since 0.1.0
 * @category deprecated
 * @deprecated Use `MemoryStore`.
 */
export import MemoryRepository = MemoryRepositoryModule

/**
 * @since 0.1.0
 * @category deprecated
 * @deprecated Use `PgStore`.
 */
export import PgRepository = PgRepositoryModule

/**
 * @since 0.1.0
 * @category deprecated
 * @deprecated Use `SettingsStore`.
 */
export import SettingsRepository = SettingsRepositoryModule

/**
 * @since 0.1.0
 * @category deprecated
 * @deprecated Use `SqlStore`.
 */
export import SqlRepository = SqlRepositoryModule

/**
 * @since 0.1.0
 * @category deprecated
 * @deprecated Use `Store`.
 */
export import Storage = StorageModule

/**
 * @since 0.1.0
 * @category deprecated
 * @deprecated Use `SummarizationStrategy`: its `Options`, `defaults` and `SummarizationOptions`.
 */
export import SummarizationOptions = SummarizationOptionsModule

/**
 * @since 0.1.0
 * @category deprecated
 * @deprecated Use `SummaryStore`.
 */
export import SummaryRepository = SummaryRepositoryModule
