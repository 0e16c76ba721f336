/**
 * A memory for a host's tests: a fresh in-memory store (or your own store layer), a scripted
 * summarizer that records its calls, the approximate token counter, your choice of strategy, and
 * faults on cue.
 *
 * @since 0.1.0
 */
import * as AiError from "@effect/ai/AiError"
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import { Context, Effect, Layer, Ref } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { StrategyName } from "../domain/ConversationSettings.js"
import type { DataValidationError } from "../errors/DataValidationError.js"
import { RepositoryError } from "../errors/RepositoryError.js"
import { SkillExecutionError } from "../errors/SkillExecutionError.js"
import { SkillService } from "../services/SkillService.js"
import type { HierarchicalOptions } from "../strategies/HierarchicalStrategy.js"
import * as ChatMemoryLive from "./ChatMemoryLive.js"
import * as Service from "./internal/service.js"
import * as ScriptedSkill from "./skills/ScriptedSkill.js"
import * as MemoryStore from "./store/MemoryStore.js"
import * as Store from "./store/Store.js"
import * as ApproximateTokenCounter from "./tokens/ApproximateTokenCounter.js"

/**
 * The test memory's options: the strategy (`summarization` by default) and its knobs, the
 * summarizer's script (deterministic answers by default), the store, and the embedding model.
 * Skill calls are not retried unless `retries` says so: a failure shows at once, and a test that
 * holds the clock still (`TestClock`) waits on no retry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<E = never, R = never> extends Partial<HierarchicalOptions> {
  readonly strategy?: StrategyName | undefined
  readonly script?: ScriptedSkill.ScriptedSkill.Script | undefined
  /**
   * The store, a fresh `MemoryStore` by default. Any layer of `Store.Ports` fits, such as a SQL store
   * or a double built with `Store.layer`. Its error and requirements become the test memory's.
   */
  readonly store?: Layer.Layer<Store.Ports, E, R> | undefined
  /**
   * The embedding model, used with `recall: "hybrid"` and a summarizing strategy to search by
   * meaning. Without it, recall is lexical. Its error and requirements become the test memory's.
   */
  readonly embeddings?: Layer.Layer<EmbeddingModel.EmbeddingModel, E, R> | undefined
}

/**
 * A call of the store's ports, by its method's name (`appendMessages`, `readWindow`, `getFacts`, …):
 * what `failStore` takes, and what the `RepositoryError`'s `operation` then names.
 *
 * @since 0.2.0
 * @category models
 */
export type StoreOperation = { readonly [Port in keyof Store.Store]: keyof Store.Store[Port] }[keyof Store.Store]

/**
 * Faults on cue, to test a host's error handling. After `failStore`, store calls fail with a
 * `RepositoryError`. After `failSummarizer`, summarizer calls fail with a `SkillExecutionError`.
 * After `failEmbeddings`, embedding calls fail with an `AiError`; recall falls back to words and
 * emits `EmbeddingFailed`. `heal` ends every fault. The test memory provides it.
 *
 * @since 0.2.0
 * @category tags
 */
export class Faults extends Context.Tag("effect-chat-memory/ChatMemoryTest/Faults")<Faults, {
  /**
   * From now on, store calls fail with a `RepositoryError` whose `operation` names the call
   * (`appendMessages`, `readWindow`, …). Every call fails, or only those in `operations`.
   */
  readonly failStore: (
    options?: { readonly operations?: ReadonlyArray<StoreOperation> | undefined }
  ) => Effect.Effect<void>
  /** From now on, the summarizer's calls fail with a `SkillExecutionError` (`Unavailable`, retryable). */
  readonly failSummarizer: Effect.Effect<void>
  /** From now on, embedding calls fail with an `AiError` (with `embeddings` and `recall: "hybrid"`). */
  readonly failEmbeddings: Effect.Effect<void>
  /** Ends every fault: the calls after it succeed again. */
  readonly heal: Effect.Effect<void>
}>() {}

interface Armed {
  /** The store's operations that fail: all of them (`true`), or those named. */
  readonly store: boolean | ReadonlySet<StoreOperation>
  readonly summarizer: boolean
  readonly embeddings: boolean
}

const healed: Armed = { store: false, summarizer: false, embeddings: false }

const makeFaults = Effect.map(Ref.make<Armed>(healed), (armed) => ({
  armed,
  faults: Faults.of({
    failStore: (options) =>
      Ref.update(armed, (a) => ({
        ...a,
        store: options?.operations === undefined ? true : new Set(options.operations)
      })),
    failSummarizer: Ref.update(armed, (a) => ({ ...a, summarizer: true })),
    failEmbeddings: Ref.update(armed, (a) => ({ ...a, embeddings: true })),
    heal: Ref.set(armed, healed)
  })
}))

/** Fails with the store's error when `operation` is armed. */
const storeCheck = (armed: Ref.Ref<Armed>) => (operation: StoreOperation, conversationId?: string) =>
  Effect.flatMap(Ref.get(armed), ({ store }) =>
    store === true || (store !== false && store.has(operation))
      ? Effect.fail(new RepositoryError({ operation, conversationId, detail: "a fault set by the test" }))
      : Effect.void)

/** Every port of the store, each call failing on cue. */
const faultyStore = (store: Store.Store, armed: Ref.Ref<Armed>): Store.Store => {
  const check = storeCheck(armed)
  // A user's calls have no conversation to name in the error.
  const ofConversation = <A extends ReadonlyArray<unknown>, B, E>(
    operation: StoreOperation,
    call: (conversationId: ConversationId, ...rest: A) => Effect.Effect<B, E>
  ) =>
  (conversationId: ConversationId, ...rest: A) =>
    Effect.zipRight(check(operation, conversationId), call(conversationId, ...rest))
  const ofUser =
    <A extends ReadonlyArray<unknown>, B, E>(operation: StoreOperation, call: (...args: A) => Effect.Effect<B, E>) =>
    (...args: A) => Effect.zipRight(check(operation), call(...args))
  const { index, lease, repository, settings, summaries, users } = store
  return {
    repository: {
      appendMessages: ofConversation("appendMessages", repository.appendMessages),
      getConversation: ofConversation("getConversation", repository.getConversation),
      listMessages: ofConversation("listMessages", repository.listMessages),
      countMessages: ofConversation("countMessages", repository.countMessages),
      readWindow: ofConversation("readWindow", repository.readWindow),
      readTurns: ofConversation("readTurns", repository.readTurns),
      deleteConversation: ofConversation("deleteConversation", repository.deleteConversation)
    },
    summaries: {
      getSummaryState: ofConversation("getSummaryState", summaries.getSummaryState),
      commitSummary: (commit) =>
        Effect.zipRight(check("commitSummary", commit.conversationId), summaries.commitSummary(commit)),
      listSummarizations: ofConversation("listSummarizations", summaries.listSummarizations)
    },
    settings: {
      getSettings: ofConversation("getSettings", settings.getSettings),
      setSettings: ofConversation("setSettings", settings.setSettings),
      updateSettings: ofConversation("updateSettings", settings.updateSettings)
    },
    index: {
      searchMessages: ofConversation("searchMessages", index.searchMessages),
      pendingEmbeddings: ofConversation("pendingEmbeddings", index.pendingEmbeddings),
      storeEmbeddings: ofConversation("storeEmbeddings", index.storeEmbeddings),
      searchEmbeddings: ofConversation("searchEmbeddings", index.searchEmbeddings)
    },
    lease: {
      withLease: (conversationId, effect) =>
        Effect.zipRight(check("withLease", conversationId), lease.withLease(conversationId, effect))
    },
    users: {
      getFacts: ofUser("getFacts", users.getFacts),
      mergeFacts: ofUser("mergeFacts", users.mergeFacts),
      listConversations: ofUser("listConversations", users.listConversations),
      searchMessages: ofUser("searchMessages", users.searchMessages),
      searchEmbeddings: ofUser("searchEmbeddings", users.searchEmbeddings),
      readTurns: ofUser("readTurns", users.readTurns),
      erase: ofUser("erase", users.erase)
    }
  }
}

/** The summarizer, each call failing on cue. */
const faultySkill = (inner: SkillService.Service, armed: Ref.Ref<Armed>): SkillService.Service => {
  const check = (skillId: string) =>
    Effect.flatMap(Ref.get(armed), ({ summarizer }) =>
      summarizer
        ? Effect.fail(
          new SkillExecutionError({
            skillId,
            reason: "Unavailable",
            retryable: true,
            detail: "a fault set by the test"
          })
        )
        : Effect.void)
  return SkillService.of({
    summarize: (input) => Effect.zipRight(check("scripted/summarize@1"), inner.summarize(input)),
    extractFacts: (input) => Effect.zipRight(check("scripted/extract-facts@1"), inner.extractFacts(input))
  })
}

/** The embedding model, each call failing on cue. */
const faultyEmbeddings = (inner: EmbeddingModel.Service, armed: Ref.Ref<Armed>): EmbeddingModel.Service => {
  const check = (method: string) =>
    Effect.flatMap(Ref.get(armed), ({ embeddings }) =>
      embeddings
        ? Effect.fail(
          new AiError.UnknownError({ module: "ChatMemoryTest", method, description: "a fault set by the test" })
        )
        : Effect.void)
  return {
    embed: (input) => Effect.zipRight(check("embed"), inner.embed(input)),
    embedMany: (input, options) => Effect.zipRight(check("embedMany"), inner.embedMany(input, options))
  }
}

/**
 * A fresh memory per build: provide it to each test so that no state leaks between tests. Besides
 * the services of `ChatMemoryLive`, it provides `ScriptedSkill` (the summarizer's call log) and
 * `Faults`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatMemory, MemoryStore, Store } from "effect-chat-memory"
 *
 * // A store double of your own: any layer of the storage ports, here the in-memory store whose
 * // reads of the window are counted.
 * let windowReads = 0
 * const CountingStore = Store.layer(Effect.map(MemoryStore.make, (store) => ({
 *   ...store,
 *   repository: {
 *     ...store.repository,
 *     readWindow: (id, query) => Effect.zipRight(Effect.sync(() => windowReads++), store.repository.readWindow(id, query))
 *   }
 * })))
 *
 * export const TestMemory = ChatMemory.layerTest({ strategy: "noop", store: CountingStore })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E = never, R = never>(
  options: Options<E, R> = {}
): Layer.Layer<ChatMemoryLive.Services | ScriptedSkill.ScriptedSkill | Faults, DataValidationError | E, R> => {
  const { embeddings, script, store, ...knobs } = options
  // A fault shows at once: no retry waits on a clock a test may hold still.
  const strategy = { retries: 0, ...knobs }
  return Layer.unwrapEffect(Effect.map(makeFaults, ({ armed, faults }) => {
    const ports = Store.layer(Effect.map(Store.get, (inner) => faultyStore(inner, armed))).pipe(
      Layer.provide(store ?? MemoryStore.layer)
    )
    const recall = ChatMemoryLive.layerRecall<E, R>({
      ...strategy,
      embeddings: embeddings === undefined ? undefined : {
        _tag: "embedding-model",
        layer: Layer.effect(
          EmbeddingModel.EmbeddingModel,
          Effect.map(EmbeddingModel.EmbeddingModel, (inner) => faultyEmbeddings(inner, armed))
        ).pipe(Layer.provide(embeddings))
      }
    })
    const faultySkills = Layer.effectContext(Effect.gen(function*() {
      const skills = yield* Effect.context<SkillService | ScriptedSkill.ScriptedSkill>()
      return Context.add(skills, SkillService, faultySkill(Context.get(skills, SkillService), armed))
    })).pipe(Layer.provide(ScriptedSkill.layer(script)))
    return Service.layer.pipe(
      Layer.provideMerge(ChatMemoryLive.layerStrategy(strategy)),
      Layer.provideMerge(recall),
      Layer.provideMerge(faultySkills),
      Layer.provideMerge(ports),
      Layer.provideMerge(ApproximateTokenCounter.layer),
      Layer.provideMerge(Layer.succeed(Faults, faults))
    )
  }))
}
