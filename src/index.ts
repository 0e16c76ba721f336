/**
 * effect-chat-memory: long-running conversation memory for Effect-based LLM agents.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as ContextSettings from "./domain/ContextSettings.js"

/** @since 0.1.0 */
export * as ConversationId from "./domain/ConversationId.js"

/** @since 0.1.0 */
export * as ConversationSettings from "./domain/ConversationSettings.js"

/** @since 0.1.0 */
export * as ConversationStats from "./domain/ConversationStats.js"
/** @since 0.2.0 */
export * as ConversationEntry from "./domain/ConversationEntry.js"

/** @since 0.1.0 */
export * as Fact from "./domain/Fact.js"

/** @since 0.1.0 */
export * as MemoryContext from "./domain/MemoryContext.js"

/** @since 0.1.0 */
export * as MemoryEvent from "./domain/MemoryEvent.js"

/** @since 0.1.0 */
export * as Message from "./domain/Message.js"

/** @since 0.1.0 */
export * as SummaryState from "./domain/SummaryState.js"

/** @since 0.1.0 */
export * as Turn from "./domain/Turn.js"
/** @since 0.2.0 */
export * as UserErasure from "./domain/UserErasure.js"
/** @since 0.2.0 */
export * as UserFact from "./domain/UserFact.js"
/** @since 0.2.0 */
export * as UserId from "./domain/UserId.js"

/** @since 0.1.0 */
export * as ChatMemoryError from "./errors/ChatMemoryError.js"

/** @since 0.1.0 */
export * as ConversationNotFoundError from "./errors/ConversationNotFoundError.js"

/** @since 0.1.0 */
export * as DataValidationError from "./errors/DataValidationError.js"

/** @since 0.1.0 */
export * as RepositoryError from "./errors/RepositoryError.js"

/** @since 0.1.0 */
export * as SkillExecutionError from "./errors/SkillExecutionError.js"

/** @since 0.1.0 */
export * as MemoryManagementStrategy from "./services/MemoryManagementStrategy.js"

/** @since 0.1.0 */
export * as MessageIndex from "./services/MessageIndex.js"

/** @since 0.1.0 */
export * as RepositoryService from "./services/RepositoryService.js"

/** @since 0.2.0 */
export * as SettingsStore from "./services/SettingsStore.js"

/** @since 0.1.0 */
export * as SkillService from "./services/SkillService.js"

/** @since 0.1.0 */
export * as SummarizationLease from "./services/SummarizationLease.js"

/** @since 0.2.0 */
export * as SummaryStore from "./services/SummaryStore.js"

/** @since 0.1.0 */
export * as TokenCounter from "./services/TokenCounter.js"
/** @since 0.2.0 */
export * as UserStore from "./services/UserStore.js"

/** @since 0.1.0 */
export * as HierarchicalStrategy from "./strategies/HierarchicalStrategy.js"

/** @since 0.1.0 */
export * as NoopStrategy from "./strategies/NoopStrategy.js"

/** @since 0.2.0 */
export * as Recall from "./strategies/Recall.js"

/** @since 0.1.0 */
export * as SlidingWindowStrategy from "./strategies/SlidingWindowStrategy.js"

/** @since 0.1.0 */
export * as SummarizationStrategy from "./strategies/SummarizationStrategy.js"

/** @since 0.1.0 */
export * as ApproximateTokenCounter from "./layers/tokens/ApproximateTokenCounter.js"

/** @since 0.1.0 */
export * as ChatMemory from "./layers/ChatMemory.js"

/** @since 0.1.0 */
export * as ChatMemoryConfig from "./layers/ChatMemoryConfig.js"

/** @since 0.1.0 */
export * as ChatTurn from "./layers/ChatTurn.js"

/** @since 0.1.0 */
export * as ContextPrompt from "./layers/ai/ContextPrompt.js"

/** @since 0.1.0 */
export * as ExtractiveSkill from "./layers/skills/ExtractiveSkill.js"

/** @since 0.1.0 */
export * as LanguageModelSkill from "./layers/skills/LanguageModelSkill.js"

/** @since 0.2.0 */
export * as MemoryStore from "./layers/store/MemoryStore.js"

/** @since 0.1.0 */
export * as OpenAiSkill from "./layers/skills/OpenAiSkill.js"

/** @since 0.1.0 */
export * as PgliteClient from "./layers/store/PgliteClient.js"

/** @since 0.2.0 */
export * as PgStore from "./layers/store/PgStore.js"

/** @since 0.1.0 */
export * as Prompts from "./layers/skills/Prompts.js"

/** @since 0.1.0 */
export * as RecallToolkit from "./layers/RecallToolkit.js"

/** @since 0.1.0 */
export * as ScriptedSkill from "./layers/skills/ScriptedSkill.js"

/** @since 0.2.0 */
export * as SqlStore from "./layers/store/SqlStore.js"

/** @since 0.2.0 */
export * as Store from "./layers/store/Store.js"

// The names of the previous version, for one release.
import * as ChatMemoryVariablesModule from "./layers/ChatMemoryConfig.js"
import * as MemoryRepositoryModule from "./layers/store/MemoryStore.js"
import * as PgRepositoryModule from "./layers/store/PgStore.js"
import * as SqlRepositoryModule from "./layers/store/SqlStore.js"
import * as StorageModule from "./layers/store/Store.js"
import * as SettingsRepositoryModule from "./services/SettingsStore.js"
import * as SummaryRepositoryModule from "./services/SummaryStore.js"
import * as SummarizationOptionsModule from "./strategies/SummarizationStrategy.js"

/**
 * @since 0.1.0
 * @deprecated Use `ChatMemoryConfig`: its `variables` is the environment table.
 */
export import ChatMemoryVariables = ChatMemoryVariablesModule

/**
 * @since 0.1.0
 * @deprecated Use `MemoryStore`.
 */
export import MemoryRepository = MemoryRepositoryModule

/**
 * @since 0.1.0
 * @deprecated Use `PgStore`.
 */
export import PgRepository = PgRepositoryModule

/**
 * @since 0.1.0
 * @deprecated Use `SettingsStore`.
 */
export import SettingsRepository = SettingsRepositoryModule

/**
 * @since 0.1.0
 * @deprecated Use `SqlStore`.
 */
export import SqlRepository = SqlRepositoryModule

/**
 * @since 0.1.0
 * @deprecated Use `Store`.
 */
export import Storage = StorageModule

/**
 * @since 0.1.0
 * @deprecated Use `SummarizationStrategy`: its `Options`, `defaults` and `SummarizationOptions`.
 */
export import SummarizationOptions = SummarizationOptionsModule

/**
 * @since 0.1.0
 * @deprecated Use `SummaryStore`.
 */
export import SummaryRepository = SummaryRepositoryModule
