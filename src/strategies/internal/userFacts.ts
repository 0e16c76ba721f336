/**
 * What is known about a user, learned from the user's conversations. A background job per
 * conversation reads its answered turns past its facts cursor, and has the skill extract their
 * facts, starting from what is known about the user. It merges the facts new or changed, each dated
 * by its source message, and the removals the skill names. The merge moves the cursor in the same
 * transaction, so a turn is read once, whatever runs at the same time.
 */
import { Cache, Duration, Effect, Option } from "effect"
import type { ConversationId } from "../../domain/ConversationId.js"
import type { Fact } from "../../domain/Fact.js"
import { factsNamedIn } from "../../domain/internal/facts.js"
import { groupTurns } from "../../domain/internal/turns.js"
import type { Message } from "../../domain/Message.js"
import type { Turn } from "../../domain/Turn.js"
import { UserFact } from "../../domain/UserFact.js"
import type { UserId } from "../../domain/UserId.js"
import { RepositoryService } from "../../services/RepositoryService.js"
import { SkillService } from "../../services/SkillService.js"
import { UserStore } from "../../services/UserStore.js"
import * as Metrics from "./metrics.js"
import type { SummarizationOptions } from "./options.js"
import type * as Breaker from "./summarizer/breaker.js"
import { type Jobs, makeJobs, Pending } from "./summarizer/jobs.js"
import { callSkill } from "./summarizer/producers.js"

/** The most conversations of a user a look for turns left unread resumes. */
const resumeLimit = 50

/** The most users whose look is remembered; the least recent are looked over again. */
const lookedUsers = 10_000

/** How long a look over a user's conversations holds. */
const lookEvery = Duration.minutes(10)

/** The most messages one page reads. A longer backlog takes several pages. */
const pageSize = 200

/** The most facts one extraction keeps, in tokens: enough for a few turns' facts. */
const factTokens = 4000

/** Turns that were answered: all but a last one that holds the user's message alone. */
const answered = (turns: ReadonlyArray<Turn>): ReadonlyArray<Turn> => {
  const last = turns[turns.length - 1]
  return last !== undefined && last.messages.every((message) => message.role === "user") ? turns.slice(0, -1) : turns
}

/** A fact the skill drew from the turns, as a fact about the user dated by its latest source. */
const toUserFact = (
  conversationId: ConversationId,
  bySeq: ReadonlyMap<number, Message>,
  fallback: Message,
  fact: SkillService.FactsAndNarrative["facts"][number]
): UserFact => {
  const sources = (fact.sourceSeqs ?? []).flatMap((seq) => {
    const message = bySeq.get(seq)
    return message === undefined ? [] : [message]
  })
  const latest = sources.reduce((a, b) => (b.seq > a.seq ? b : a), sources[0] ?? fallback)
  return new UserFact({
    key: fact.key,
    value: fact.value,
    category: fact.category,
    saidAt: latest.createdAt,
    source: { conversationId, seq: latest.seq }
  }, { disableValidation: true })
}

/** A fact about the user as the skill reads it: its sources are in other conversations. */
const toFact = (fact: UserFact): Fact => ({ key: fact.key, value: fact.value ?? "", category: fact.category })

/**
 * The jobs that learn what is known about users, one conversation at a time. Their skill calls go
 * through `breaker`, the summarizer's: a skill that keeps failing is left alone by both.
 */
export const makeUserFacts = (settings: SummarizationOptions, breaker: Breaker.Breaker) =>
  Effect.gen(function*() {
    const repository = yield* RepositoryService
    const users = yield* UserStore
    const skill = yield* SkillService
    /**
     * Starts the jobs of the user's conversations with turns an earlier run left unread (a process
     * closed in its middle, the skill failed), but those running. A user is looked over on the first
     * run of theirs in a process, then at most once per `lookEvery`: a failing skill is not called
     * again for each of the user's conversations on every write.
     */
    const looked = yield* Cache.make({
      capacity: lookedUsers,
      timeToLive: lookEvery,
      lookup: (userId: UserId) =>
        users.listConversations(userId, { limit: resumeLimit, factsPending: true }).pipe(
          Effect.flatMap((pending) =>
            Effect.forEach(pending, ({ conversationId }) =>
              Effect.flatMap(
                jobs.isRunning(conversationId),
                (running) => running ? Effect.void : jobs.trigger(conversationId)
              ), { discard: true })
          ),
          Effect.catchAll((error) =>
            Effect.logDebug("looking for turns left unread failed").pipe(Effect.annotateLogs({ error: error.message }))
          )
        )
    })

    /** One page. True when more may be pending: a full page, or a merge refused as stale. */
    const page = (conversationId: ConversationId, due: Effect.Effect<void>) =>
      Effect.gen(function*() {
        const info = yield* repository.getConversation(conversationId)
        const userId = info.userId
        if (userId === null) return false
        // Another job's look at the user, interrupted (its conversation cleared), is not this run's end.
        yield* Effect.catchAllCause(looked.get(userId), () => Effect.void)
        if (info.factsCursor >= info.lastSeq) return false
        return yield* learn(conversationId, info, userId, due)
      })

    /** Reads the turns past the cursor, and merges the facts they state. */
    const learn = (
      conversationId: ConversationId,
      info: RepositoryService.ConversationInfo,
      userId: UserId,
      due: Effect.Effect<void>
    ) =>
      Effect.gen(function*() {
        const after = Math.max(info.factsCursor, info.systemPrefixSeq)
        const messages = yield* repository.listMessages(conversationId, { after, limit: pageSize })
        const turns = answered(groupTurns(messages).turns)
        const last = turns[turns.length - 1]?.messages.at(-1)
        if (last === undefined) return false
        yield* due
        const known = yield* users.getFacts(userId)
        const extracted = yield* breaker.guard(
          conversationId,
          callSkill(
            settings,
            "extract-facts",
            skill.extractFacts({
              conversationId,
              existingSummary: { _tag: "None" },
              existingFacts: factsNamedIn(known.map(toFact), turns),
              turns,
              // The narrative would be dropped: the skill writes none.
              maxTokens: 0,
              maxFactTokens: factTokens
            })
          )
        )
        if (Option.isNone(extracted)) {
          // The skill is left alone for now: the turns stay pending, read by a later run.
          yield* Effect.logDebug("skill paused by its breaker; learning what is known about the user waits")
            .pipe(Effect.annotateLogs({ conversationId }))
          return false
        }
        const output = extracted.value
        const bySeq = new Map(messages.map((message) => [message.seq, message]))
        const byKey = new Map(known.map((fact) => [fact.key, fact]))
        // New or changed, or said again in these turns (its date moves on).
        const said = output.value.facts.filter((fact) =>
          byKey.get(fact.key)?.value !== fact.value || (fact.sourceSeqs ?? []).some((seq) => bySeq.has(seq))
        )
        const facts = said.map((fact) => toUserFact(conversationId, bySeq, last, fact))
        // A removal is dated by the page's last message: the turns said it by then.
        const removed = (output.value.removed ?? []).flatMap((key) => {
          const fact = byKey.get(key)
          return fact === undefined ? [] : [
            new UserFact({
              key,
              value: null,
              category: fact.category,
              saidAt: last.createdAt,
              source: { conversationId, seq: last.seq }
            }, { disableValidation: true })
          ]
        })
        const merged = yield* users.mergeFacts(userId, [...facts, ...removed], {
          conversationId,
          expected: info.factsCursor,
          next: last.seq,
          incarnation: info.incarnation
        })
        return merged._tag === "Stale" || messages.length === pageSize
      })

    const run = (conversationId: ConversationId, due: Effect.Effect<void>): Effect.Effect<typeof Pending | undefined> =>
      Effect.gen(function*() {
        // A few pages a run, then the other conversations' turn: a longer backlog runs again after.
        for (let i = 0; i < 8; i++) if (!(yield* page(conversationId, due))) return undefined
        return Pending
      }).pipe(
        Effect.catchAll((error) =>
          error._tag === "ConversationNotFoundError"
            ? Effect.succeed(undefined)
            : Effect.logWarning("learning what is known about the user failed; the turns stay pending").pipe(
              Effect.annotateLogs({ conversationId, error: error.message }),
              Effect.zipRight(Metrics.userFactsFailures(Effect.succeed(1))),
              Effect.as(undefined)
            )
        ),
        Effect.withSpan("UserFacts.learn", { attributes: { conversationId } })
      )

    const jobs: Jobs = yield* makeJobs(run, { concurrency: settings.summarizationConcurrency })
    return jobs
  })
