/**
 * The composed memory's options: its parts, the strategy's knobs, and the parts' defaults.
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
 * The embedding model of `hybrid` recall: an OpenAI model (or a compatible server, by `apiUrl`), or
 * any `@effect/ai` `EmbeddingModel` layer (typed options only). Vectors are stored under the
 * `embeddingModel` name, the OpenAI model's by default.
 *
 * @since 0.1.0
 * @category models
 */
export type Embeddings<E = never, R = never> =
  | ({ readonly _tag: "openai" } & OpenAiEmbeddings.OpenAiEmbeddings.Options)
  | {
    readonly _tag: "embedding-model"
    /** The provider's layer. Its errors and requirements become the composed memory's. */
    readonly layer: Layer.Layer<EmbeddingModel.EmbeddingModel, E, R>
  }

/**
 * Where the messages are kept. PGlite without `dataDir` keeps them in memory for the layer's life.
 * A new PGlite database starts from `template` (see `PgliteClient.Options`). `sql` keeps them in
 * the app's own database, over its `SqlClient` layer (typed options only). The memory's tables are
 * prefixed `chat_memory_` and its migrations are recorded apart.
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
     * The app's `SqlClient` layer, PostgreSQL or PGlite (e.g. `PgClient.layer(...)`). The app and the
     * memory share its pool when both use the same layer value. A failure to build it is a
     * `RepositoryError` (`connect`).
     */
    readonly layer: Layer.Layer<SqlClient.SqlClient, unknown>
  } & SqlStore.Options)

/**
 * Who writes the summaries: the offline extractive skill (no model, no key), an OpenAI model (or a
 * compatible server, by `apiUrl`), any `@effect/ai` `LanguageModel` layer with the memory's
 * prompts, or your own `SkillService` layer. The environment selects one of the first two; the
 * last two take typed options.
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
     * The provider's layer, e.g. `OpenAiLanguageModel.model("gpt-4o-mini")`, with or without its
     * client. Its errors and requirements become the composed memory's. Each summary records the
     * model name its response gives, unless `model` is set.
     */
    readonly layer: Layer.Layer<LanguageModel.LanguageModel, E, R>
  } & LanguageModelSkill.LanguageModelSkill.Options)
  | {
    readonly _tag: "skill"
    /** Your own `SkillService`. It may use the memory's `TokenCounter`. */
    readonly layer: Layer.Layer<SkillService, never, TokenCounter>
  }

/**
 * The composed memory's options: its parts and the strategy's knobs. The knobs are
 * `HierarchicalStrategy`'s, a superset of `SummarizationStrategy`'s. The sliding window reads only
 * `tokenBudget`, the no-op strategy none. Everything left out takes its default. `E` and `R` are
 * the errors and requirements of the summarizer and embeddings layers.
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
  /** The embedding model that `recall: "hybrid"` requires; unused otherwise. */
  readonly embeddings?: Embeddings<E, R> | undefined
  /** The name `hybrid` recall's vectors are stored under; the OpenAI embedding model's by default. */
  readonly embeddingModel?: string | undefined
  /** How long a context waits for the search by meaning (`Recall.HybridOptions.queryTimeout`). */
  readonly embeddingTimeout?: Duration.DurationInput | undefined
  /** The longest one background embedding call may take (`Recall.HybridOptions.batchTimeout`). */
  readonly embeddingBatchTimeout?: Duration.DurationInput | undefined
  /**
   * The most of a user's newest messages a search by meaning across the user's conversations
   * compares (`Recall.HybridOptions.userScanLimit`).
   *
   * @since 0.3.0
   */
  readonly embeddingUserScanLimit?: number | undefined
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
