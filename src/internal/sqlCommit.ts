/**
 * The compare-and-set of the summary state, as one transaction body of the SQL repository.
 */
import { DateTime, Effect, Option } from "effect"
import { Message } from "../domain/Message.js"
import * as SummaryState from "../domain/SummaryState.js"
import { ConversationNotFoundError } from "../errors/ConversationNotFoundError.js"
import { CommitResult, type RepositoryService } from "../services/RepositoryService.js"
import * as Rows from "./sqlRows.js"
import type { Statements } from "./sqlStatements.js"

/**
 * Applies a commit, to be run in a transaction: the conversation row is locked first, so the
 * check of the expected state and the writes that follow see no concurrent change.
 */
export const applyCommit = (statements: Statements) =>
  Effect.fn("SqlRepository.commitSummary.transaction")(
    function*(commit: RepositoryService.SummaryCommit, now: DateTime.Utc) {
      const { conversationId } = commit
      const row = yield* statements.lockConversation(conversationId)
      if (Option.isNone(row)) return yield* new ConversationNotFoundError({ conversationId })
      const info = Rows.toInfo(conversationId, row.value)
      const state = Rows.toState(conversationId, row.value)
      if (state.cursor !== commit.expected.cursor || state.version !== commit.expected.version) {
        return CommitResult.Stale({ current: state })
      }
      // A cursor behind the current one or past the last message is a bug of the caller (the
      // strategies compute it from messages they read), not a condition to recover from.
      if (commit.cursor < state.cursor || commit.cursor > info.lastSeq) {
        return yield* Effect.dieMessage(
          `commitSummary: cursor ${commit.cursor} outside [${commit.expected.cursor}, lastSeq]`
        )
      }
      const version = state.version + 1
      let { lastSeq, messageCount, tokenCount } = info
      const roleCounts = { ...info.roleCounts }
      if (commit.prune === true) {
        // Kept: the leading system messages, the buffer after the new cursor, summary messages.
        const pruned = yield* statements.deleteCovered({
          id: conversationId,
          prefix: info.systemPrefixSeq,
          cursor: commit.cursor
        })
        for (const counts of pruned) {
          messageCount -= counts.total
          tokenCount -= counts.token_count
          for (const role of ["system", "user", "assistant", "tool", "summary"] as const) {
            roleCounts[role] -= counts[role]
          }
        }
      }
      if (commit.summaryMessage !== undefined) {
        lastSeq += 1
        messageCount += 1
        roleCounts.summary += 1
        tokenCount += commit.summaryMessage.tokenCount
        yield* statements.insertMessages(conversationId, [
          new Message({
            conversationId,
            seq: lastSeq,
            role: "summary",
            content: commit.summaryMessage.content,
            metadata: { summaryMetadataId: version },
            tokenCount: commit.summaryMessage.tokenCount,
            createdAt: now
          }, { disableValidation: true })
        ])
      }
      const nextState = new SummaryState.SummaryState({
        conversationId,
        narrative: commit.narrative,
        facts: commit.facts,
        layers: commit.layers ?? [],
        cursor: commit.cursor,
        version,
        updatedAt: now
      }, { disableValidation: true })
      const nextInfo = { ...info, lastSeq, messageCount, roleCounts, tokenCount, updatedAt: now }
      yield* statements.updateConversation(nextInfo, nextState, DateTime.toDateUtc(now))
      const record = new SummaryState.SummarizationRecord({
        ...commit.record,
        conversationId,
        version,
        createdAt: now
      }, { disableValidation: true })
      yield* statements.insertRecord(record)
      return CommitResult.Committed({ state: nextState, record })
    }
  )
