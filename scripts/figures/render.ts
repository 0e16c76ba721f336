/**
 * The generated blocks of the documents, written from the committed runs alone: a pure function
 * of the bench's and `eval`'s JSON, so that a test can hold the documents to it. The README's
 * headline figures are here; the pages' tables in performance.ts and evaluation.ts.
 */
import { acrossConversations, bm25Of, evaluationBlocks, labels, result } from "./evaluation.js"
import { type Block, codeLine, date, int, ms, percentOf, sum, times } from "./format.js"
import { performanceBlocks } from "./performance.js"
import type { EvalRun, Runs } from "./runs.js"

export type { Block } from "./format.js"

const roundTrips = (n: number): string => `${n} round trip${n === 1 ? "" : "s"}`

/** A store's name after a figure: `in memory`, `on PGlite`. */
const storeName = (store: string): string =>
  store === "in-memory" ? "in memory" : `on ${store.replace(" (in memory)", "")}`

const headline = ({ bench, evals }: Runs): string => {
  const lines: Array<string> = []
  const single = evals.filter((run) => !acrossConversations(run))
  const total = (runs: ReadonlyArray<EvalRun>, label: string) =>
    percentOf(
      sum(runs.map((run) => result(run, label)?.inContext ?? 0)),
      sum(runs.filter((run) => result(run, label) !== undefined).map((run) => run.eval.asked))
    )
  const bm25 = (runs: ReadonlyArray<EvalRun>) => {
    const counted = runs.filter((run) => bm25Of(run) !== null)
    return percentOf(sum(counted.map((run) => bm25Of(run) ?? 0)), sum(counted.map((run) => run.eval.asked)))
  }
  if (single.length > 0) {
    lines.push(
      `- **Answers kept in a long conversation** (${single.length} question sets, ${
        int(sum(single.map((run) => run.eval.asked)))
      } questions asked long after their answer, offline summarizer): a sliding window of the same ` +
        `budget keeps ${total(single, labels.window)}, summarization ${
          total(single, labels.summarization)
        }, hierarchical ${total(single, labels.hierarchical)}; with the question as the query, ${
          total(single, labels.summarizationRecall)
        } and ${total(single, labels.hierarchicalRecall)}, against ${
          bm25(single)
        } for a BM25 index over every turn in the whole budget. ` +
        "([evaluation](docs/evaluation.md#answers-in-context))"
    )
  }
  const across = evals.filter(acrossConversations)
  if (across.length > 0) {
    const noUser = percentOf(
      sum(across.map((run) => Math.max(0, ...run.eval.results.flatMap((r) => r.noUser ?? [])))),
      sum(across.map((run) => run.eval.asked))
    )
    lines.push(
      `- **A new conversation knows its user** (${across.length} sets, ${
        int(sum(across.map((run) => run.eval.asked)))
      } questions asked in a new conversation): without a query ${total(across, labels.summarization)} ` +
        `(summarization) and ${total(across, labels.hierarchical)} (hierarchical), where the same memory without ` +
        `the user keeps ${noUser}; with the question as the query ${total(across, labels.summarizationRecall)} and ${
          total(across, labels.hierarchicalRecall)
        }, against ${bm25(across)} for a BM25 index over all of the user's turns. ` +
        "([evaluation](docs/evaluation.md#a-new-conversation-of-a-user))"
    )
  }
  const turn = bench.sections.perTurn
  if (turn !== undefined) {
    const row = (store: string) => turn.rows.find((r) => r.store === store && r.strategy.startsWith("summarization"))
    const memory = row("in-memory")
    const postgres = row("PostgreSQL") ?? row("PGlite (in memory)")
    const maxTrips = (field: "addMessages" | "getContext") => Math.max(0, ...turn.roundTrips.map((r) => r[field].max))
    if (memory !== undefined) {
      lines.push(
        `- **A turn's overhead** (\`addMessages\` + \`getContext\`, summarizing, median): ${
          ms(memory.memory.median)
        } in memory${postgres === undefined ? "" : `, ${ms(postgres.memory.median)} on ${postgres.store}`}; on SQL, ${
          roundTrips(maxTrips("addMessages"))
        } per \`addMessages\` and ${
          roundTrips(maxTrips("getContext"))
        } per \`getContext\`. ([performance](docs/performance.md#per-turn))`
      )
    }
  }
  const history = bench.sections.getContextByHistoryLength
  if (history !== undefined) {
    const ratios = history.stores.map((s) => `${times(s.ratiosOfMedians["100000/10000"])} ${storeName(s.store)}`)
    lines.push(
      `- **History length**: \`getContext\` on 100,000 messages against 10,000: ${
        ratios.join(", ")
      }. ([performance](docs/performance.md#history-length))`
    )
  }
  const summaries = bench.sections.summarizerCost
  const incremental = summaries?.rows.find((r) => r.mode === "incremental")
  if (incremental !== undefined) {
    lines.push(
      `- **Summarizer cost**: the incremental fold reads each conversation token ${
        incremental.tokensReadPerConversationToken.toFixed(2)
      } times, linear in the conversation. ([performance](docs/performance.md#summarizer-cost))`
    )
  }
  const dates = [bench.startedAt, ...evals.map((run) => run.startedAt)].map(date).sort()
  lines.push(
    "",
    `Measured on ${[...new Set([bench, ...evals].map((run) => codeLine(run.code)))].join("; ")} (runs of ${dates[0]}${
      dates[0] === dates.at(-1) ? "" : ` to ${dates.at(-1)}`
    }); \`npm run figures\` writes these lines from the committed runs.`
  )
  return lines.join("\n")
}

/** Every generated block of the documents, from the runs. */
export const render = (runs: Runs): ReadonlyArray<Block> => [
  ...performanceBlocks(runs.bench),
  ...evaluationBlocks(runs.evals),
  { document: "README.md", name: "headline", text: headline(runs) }
]
