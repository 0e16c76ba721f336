/**
 * The in-memory store's summary state (`SummaryStore`). A commit is a compare-and-set: record,
 * summary message and prune in one update of the store.
 */
import { Chunk, DateTime, Effect, HashMap, Option, Ref } from "effect"
import { ConversationNotFoundError } from "../../../../errors/ConversationNotFoundError.js"
import { CommitResult, SummaryStore } from "../../../../services/SummaryStore.js"
import { commitValues, isExpected } from "../commit.js"
import { type Conversation, type Snapshot, type State, stored } from "./state.js"

/** The summary state over the store's data. */
export const make = ({ find, indexed, ref, withConversation }: State): SummaryStore.Service =>
  SummaryStore.of({
    getSummaryState: Effect.fnUntraced(function*(conversationId) {
      return (yield* find(conversationId)).state
    }),

    commitSummary: Effect.fnUntraced(function*(commit) {
      const { conversationId } = commit
      const now = yield* DateTime.now
      const outcome = yield* Ref.modify(
        ref,
        (
          snapshot
        ): readonly [Option.Option<Option.Option<SummaryStore.CommitResult>>, Snapshot] => {
          const found = HashMap.get(snapshot.conversations, conversationId)
          if (Option.isNone(found)) return [Option.none(), snapshot]
          const current = found.value
          const { state, info } = current
          if (!isExpected(commit, state, info)) {
            return [Option.some(Option.some(CommitResult.Stale({ current: state }))), snapshot]
          }
          if (commit.cursor < state.cursor || commit.cursor > info.lastSeq) {
            return [Option.some(Option.none()), snapshot]
          }
          const version = state.version + 1
          const written = commitValues(commit, { version, lastSeq: info.lastSeq, now })
          let messages = current.messages
          let { lastSeq, messageCount, tokenCount } = info
          const roleCounts = { ...info.roleCounts }
          if (commit.prune === true) {
            messages = messages.filter((m) => {
              if (m.seq <= info.systemPrefixSeq || m.seq > written.state.cursor || m.role === "summary") return true
              messageCount -= 1
              roleCounts[m.role] -= 1
              tokenCount -= m.tokenCount
              return false
            })
          }
          if (written.summaryMessage !== undefined) {
            lastSeq += 1
            messageCount += 1
            roleCounts.summary += 1
            tokenCount += written.summaryMessage.tokenCount
            messages = messages.append([stored(written.summaryMessage)])
          }
          const next: Conversation = {
            info: { ...info, lastSeq, messageCount, roleCounts, tokenCount, updatedAt: now },
            messages,
            state: written.state,
            records: Chunk.append(current.records, written.record),
            search: current.search,
            vectors: current.vectors,
            lastSaidAt: current.lastSaidAt
          }
          return [
            Option.some(Option.some(CommitResult.Committed({ state: written.state, record: written.record }))),
            { ...snapshot, conversations: HashMap.set(snapshot.conversations, conversationId, next) }
          ]
        }
      )
      if (Option.isNone(outcome)) return yield* new ConversationNotFoundError({ conversationId })
      // A prune drops its messages from the index at once, which releases their memory.
      if (commit.prune === true) {
        yield* indexed(conversationId)
        yield* withConversation(
          conversationId,
          (conversation) => conversation.vectors.retain((seq) => conversation.messages.has(seq))
        )
      }
      // A cursor behind the current one or past the last message is the caller's bug. The
      // strategies compute it from messages they read.
      if (Option.isNone(outcome.value)) {
        return yield* Effect.dieMessage(
          `commitSummary: cursor ${commit.cursor} outside [${commit.expected.cursor}, lastSeq]`
        )
      }
      return outcome.value.value
    }),

    listSummarizations: Effect.fnUntraced(function*(conversationId) {
      return Chunk.toReadonlyArray((yield* find(conversationId)).records)
    })
  })
