/**
 * The embedding model of hybrid recall over the OpenAI API (`@effect/ai-openai`'s
 * `OpenAiEmbeddingModel`), for OpenAI or any compatible server by base URL. Any other
 * `@effect/ai` `EmbeddingModel` layer serves too (`ChatMemoryConfig.Embeddings`).
 *
 * @since 0.1.0
 */
import type { EmbeddingModel } from "@effect/ai"
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as OpenAiEmbeddingModel from "@effect/ai-openai/OpenAiEmbeddingModel"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Layer, type Redacted } from "effect"
import * as OpenAiModels from "../internal/openAiModels.js"

/**
 * The embedding model when none is configured.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultModel = OpenAiModels.embeddings

/**
 * The most texts one request embeds. The background job's batches are no larger.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxBatchSize = 64

/**
 * The options and types of `OpenAiEmbeddings`.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace OpenAiEmbeddings {
  /**
   * The options of `layer`.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Options {
    /** The API key; stays redacted until the HTTP call. Optional for servers that need none. */
    readonly apiKey?: Redacted.Redacted | undefined
    /** The API's base URL, ending in `/v1`; OpenAI's by default. */
    readonly apiUrl?: string | undefined
    /** The embedding model, e.g. `text-embedding-3-small`. */
    readonly model: string
    /** Shorter vectors, for the models that support it (e.g. 256 for `text-embedding-3-small`). */
    readonly dimensions?: number | undefined
  }
}

/**
 * The embedding model over the OpenAI API.
 *
 * @example
 * ```ts
 * import { Config, Effect, Layer } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 * import * as OpenAiEmbeddings from "effect-chat-memory/OpenAiEmbeddings"
 *
 * // Hybrid recall: the store's full-text search fused with embeddings, computed in the background.
 * export const MemoryLive = Layer.unwrapEffect(
 *   Effect.map(Config.redacted("OPENAI_API_KEY"), (apiKey) =>
 *     ChatMemory.layerLive({
 *       recall: "hybrid",
 *       embeddings: {
 *         _tag: "embedding-model",
 *         layer: OpenAiEmbeddings.layer({ model: "text-embedding-3-small", apiKey })
 *       }
 *     }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: OpenAiEmbeddings.Options): Layer.Layer<EmbeddingModel.EmbeddingModel> =>
  OpenAiEmbeddingModel.layerBatched({
    model: options.model,
    config: options.dimensions === undefined
      ? { maxBatchSize }
      : { maxBatchSize, dimensions: options.dimensions }
  }).pipe(
    Layer.provide(OpenAiClient.layer({ apiKey: options.apiKey, apiUrl: options.apiUrl })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
