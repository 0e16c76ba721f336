/**
 * The SQL store's summary state (`SummaryStore`): the compare-and-set commit and the records. A
 * commit writes its record, summary message and prune in one transaction.
 */
import type { SqlClient } from "@effect/sql"
import { DateTime, Effect } from "effect"
import { SummaryStore } from "../../../../services/SummaryStore.js"
import { applyCommit } from "./commit.js"
import { storeErrors } from "./errors.js"
import * as Rows from "./rows.js"
import type { Statements } from "./statements.js"

/** The summary state over the store's statements. */
export const make = (sql: SqlClient.SqlClient, statements: Statements): SummaryStore.Service => {
  const { findOrFail, requireIfEmpty, selectRecords } = statements
  const commit = applyCommit(statements)

  return SummaryStore.of({
    getSummaryState: Effect.fnUntraced(
      function*(conversationId) {
        return Rows.toState(conversationId, yield* findOrFail(conversationId))
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("getSummaryState", conversationId))
    ),

    commitSummary: Effect.fnUntraced(
      function*(summaryCommit) {
        yield* Effect.annotateCurrentSpan("conversationId", summaryCommit.conversationId)
        const now = yield* DateTime.now
        return yield* sql.withTransaction(commit(summaryCommit, now))
      },
      (effect, summaryCommit) => Effect.catchTags(effect, storeErrors("commitSummary", summaryCommit.conversationId))
    ),

    listSummarizations: Effect.fnUntraced(
      function*(conversationId) {
        const rows = yield* Effect.flatMap(
          selectRecords(conversationId),
          (rows) => requireIfEmpty(conversationId, rows)
        )
        return rows.map((row) => Rows.toRecord(conversationId, row))
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("listSummarizations", conversationId))
    )
  })
}
