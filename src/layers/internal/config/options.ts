/**
 * The options of the composed memory: the parts it is made of (store, summarizer, embeddings, token
 * counter) and the strategy's knobs, with the parts' defaults.
 */
import type { EmbeddingModel, LanguageModel } from "@effect/ai"
import type { SqlClient } from "@effect/sql"
import type { Duration, Layer } from "effect"
import type { StrategyName } from "../../../domain/ConversationSettings.js"
import type { SkillService } from "../../../services/SkillService.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"
import type { HierarchicalOptions } from "../../../strategies/HierarchicalStrategy.js"
import type * as OpenAiEmbeddings from "../../embeddings/OpenAiEmbeddings.js"
import type * as LanguageModelSkill from "../../skills/LanguageModelSkill.js"
import type * as OpenAiSkill from "../../skills/OpenAiSkill.js"
import type * as PgliteClient from "../../store/PgliteClient.js"
import type * as PgStore from "../../store/PgStore.js"
import type * as SqlStore from "../../store/SqlStore.js"
import type * as Service from "../service.js"
import { type Tokenizer, variables } from "./variables.js"

/**
 * The embedding model of `hybrid` recall: a model behind the OpenAI API (or any compatible server,
 * by `apiUrl`), or any `@effect/ai` `EmbeddingModel` layer (typed options only). Its vectors are
 * stored under the strategy's `embeddingModel` name, the OpenAI model's by default.
 *
 * @since 0.1.0
 * @category models
 */
export type Embeddings<E = never, R = never> =
  | ({ readonly _tag: "openai" } & OpenAiEmbeddings.OpenAiEmbeddings.Options)
  | {
    readonly _tag: "embedding-model"
    /** The provider's layer; its errors and requirements become the composed memory's. */
    readonly layer: Layer.Layer<EmbeddingModel.EmbeddingModel, E, R>
  }

/**
 * Where the messages are kept. PGlite without `dataDir` keeps them in memory, for the life of the
 * layer; a new database starts from `template` (`PgliteClient.Options`: the bundled cluster for a
 * new data directory, `initdb` in memory, unless set). `sql` keeps them in the app's own database: the memory's tables (all prefixed
 * `chat_memory_`, migrations recorded apart) beside the app's, over the app's `SqlClient` layer
 * (typed options only).
 *
 * @since 0.1.0
 * @category models
 */
export type Store =
  | { readonly _tag: "memory" }
  | ({ readonly _tag: "pglite" } & PgliteClient.Options)
  | ({ readonly _tag: "postgres" } & PgStore.Options)
  | ({
    readonly _tag: "sql"
    /**
     * The app's `SqlClient` layer, PostgreSQL or PGlite (e.g. `PgClient.layer(...)`). Built once
     * per composition as any layer: the app and the memory share its pool when both are built
     * from the same layer value. A failure to build it is a `RepositoryError` (`connect`).
     */
    readonly layer: Layer.Layer<SqlClient.SqlClient, unknown>
  } & SqlStore.Options)

/**
 * Who writes the summaries: the offline extractive skill (no model, no key), a model behind the
 * OpenAI API (or any compatible server, by `apiUrl`), any `@effect/ai` `LanguageModel` layer (any
 * provider, with our prompts), or a `SkillService` layer of your own. The last two are for typed
 * options (`ChatMemoryLive.layer`, or the overrides of `ChatMemoryLive.layerConfig`); the
 * environment selects one of the first two.
 *
 * @since 0.1.0
 * @category models
 */
export type Summarizer<E = never, R = never> =
  | { readonly _tag: "extractive" }
  | ({ readonly _tag: "openai" } & OpenAiSkill.OpenAiSkill.Options)
  | ({
    readonly _tag: "language-model"
    /**
     * The provider's layer, e.g. `OpenAiLanguageModel.model("gpt-4o-mini")`, its client provided
     * or not: its errors and requirements become the composed memory's. The model's name recorded
     * with each summary is the one its responses give, unless `model` says otherwise.
     */
    readonly layer: Layer.Layer<LanguageModel.LanguageModel, E, R>
  } & LanguageModelSkill.LanguageModelSkill.Options)
  | {
    readonly _tag: "skill"
    /** A `SkillService` of your own; it may use the memory's `TokenCounter`. */
    readonly layer: Layer.Layer<SkillService, never, TokenCounter>
  }

/**
 * The options of the composed memory: the parts to use, and the knobs of the strategy (those of
 * `HierarchicalStrategy`, a superset of those of `SummarizationStrategy`; the sliding window reads
 * only `tokenBudget`, the no-op strategy none). Everything left out takes its default. `E` and `R`
 * are the errors and requirements of the layers given for the summarizer and the embeddings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<E = never, R = never> extends Partial<HierarchicalOptions>, Service.Options {
  /** `summarization` by default. */
  readonly strategy?: StrategyName | undefined
  /** The in-memory store by default. */
  readonly store?: Store | undefined
  /** The extractive skill by default. */
  readonly summarizer?: Summarizer<E, R> | undefined
  /** `approximate` by default. */
  readonly tokenizer?: Tokenizer | undefined
  /** The embedding model of `recall: "hybrid"`; required by it, unused otherwise. */
  readonly embeddings?: Embeddings<E, R> | undefined
  /** The name `hybrid` recall's vectors are stored under: the OpenAI embedding model's by default. */
  readonly embeddingModel?: string | undefined
  /** The longest a context waits for the search by meaning (`Recall.HybridOptions.queryTimeout`). */
  readonly embeddingTimeout?: Duration.DurationInput | undefined
  /** The longest one background embedding call may take (`Recall.HybridOptions.batchTimeout`). */
  readonly embeddingBatchTimeout?: Duration.DurationInput | undefined
  /** @deprecated Use `embeddingTimeout`. */
  readonly embeddingTimeoutMillis?: number | undefined
  /** @deprecated Use `embeddingBatchTimeout`. */
  readonly embeddingBatchTimeoutMillis?: number | undefined
}

/**
 * The parts used when the options leave them out.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: {
  readonly strategy: StrategyName
  readonly store: Store
  readonly summarizer: Summarizer
  readonly tokenizer: Tokenizer
} = {
  strategy: variables.strategy.fallback,
  store: { _tag: "memory" },
  summarizer: { _tag: "extractive" },
  tokenizer: variables.tokenizer.fallback
}
