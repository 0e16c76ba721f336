/**
 * The generated blocks of docs/evaluation.md, from the `eval` runs of the question sets.
 */
import { type Align, type Block, codeLine, date, int, machineLine, percentOf, share, sum, table } from "./format.js"
import type { EvalRun, StrategyResult } from "./runs.js"

export const labels = {
  window: "sliding-window",
  summarization: "summarization",
  summarizationRecall: "summarization + recall",
  hierarchical: "hierarchical",
  hierarchicalRecall: "hierarchical + recall"
} as const

const columns = [
  labels.window,
  labels.summarization,
  labels.summarizationRecall,
  labels.hierarchical,
  labels.hierarchicalRecall
] as const

const titles: Record<(typeof columns)[number], string> = {
  "sliding-window": "sliding window",
  summarization: "summarization",
  "summarization + recall": "+ recall",
  hierarchical: "hierarchical",
  "hierarchical + recall": "+ recall"
}

export const result = (run: EvalRun, label: string): StrategyResult | undefined =>
  run.eval.results.find((r) => r.label === label)

/** Whether a set's questions are asked in a new conversation of the user (a transcript of several). */
export const acrossConversations = (run: EvalRun): boolean => run.eval.results.some((r) => r.noUser !== null)

export const bm25Of = (run: EvalRun): number | null => run.eval.results.find((r) => r.bm25 !== null)?.bm25 ?? null

const kinds = (runs: ReadonlyArray<EvalRun>): ReadonlyArray<string> => {
  const order = ["plain", "paraphrase", "when", "multi-turn", "profile", "corrected"]
  const found = new Set(runs.flatMap((run) => run.eval.results.flatMap((r) => r.byKind.map((k) => k.kind))))
  return [...order.filter((k) => found.has(k)), ...[...found].filter((k) => !order.includes(k)).sort()]
}

const evalRun = (evals: ReadonlyArray<EvalRun>): string => {
  const codes = [...new Set(evals.map((run) => codeLine(run.code)))]
  const machines = [...new Set(evals.map(machineLine))]
  const dates = evals.map((run) => date(run.startedAt)).sort()
  const configurations = [
    ...new Set(evals.map((run) => {
      const c = run.eval.configuration
      return `${String(c["summarizer"])} summarizer, ${String(c["store"])} store, ${String(c["tokenizer"])} counts`
    }))
  ]
  return [
    `Runs of ${dates[0] === dates.at(-1) ? dates[0] : `${dates[0]} to ${dates.at(-1)}`} on ${codes.join("; ")}.`,
    `Machine: ${machines.join("; ")}. Settings: ${configurations.join("; ")}, the defaults otherwise.`,
    `${evals.length} sets, ${int(sum(evals.map((run) => run.eval.asked)))} questions, ${
      Math.round(sum(evals.map((run) => run.seconds)))
    } s of runs.`
  ].join("\n")
}

const evalSets = (evals: ReadonlyArray<EvalRun>): string =>
  table(
    [["set", "left"], ["questions", "right"], ["kinds", "left"], ["asked in", "left"], ["tokens stored", "right"]],
    evals.map((run) => {
      const first = run.eval.results[0]
      return [
        `\`${run.eval.questions}\``,
        int(run.eval.asked),
        first === undefined || first.byKind.length === 0
          ? "plain"
          : first.byKind.map((k) => `${k.asked} ${k.kind}`).join(", "),
        acrossConversations(run) ? "a new conversation of the user" : "the conversation",
        first === undefined ? "-" : int(first.tokensStored)
      ]
    })
  )

const answers = (evals: ReadonlyArray<EvalRun>): string => {
  const cell = (run: EvalRun, label: string) => {
    const r = result(run, label)
    return r === undefined ? "-" : share(r.inContext, run.eval.asked)
  }
  const bm25Cell = (run: EvalRun) => {
    const bm25 = bm25Of(run)
    return bm25 === null ? "-" : share(bm25, run.eval.asked)
  }
  const total = (label: string) => {
    const counted = evals.filter((run) => result(run, label) !== undefined)
    return share(sum(counted.map((run) => result(run, label)?.inContext ?? 0)), sum(counted.map((r) => r.eval.asked)))
  }
  const withBm25 = evals.filter((run) => bm25Of(run) !== null)
  return table(
    [
      ["set", "left"],
      ["questions", "right"],
      ...columns.map((label): readonly [string, Align] => [titles[label], "right"]),
      ["BM25 over the turns so far", "right"]
    ],
    [
      ...evals.map((run) => [
        run.set,
        int(run.eval.asked),
        ...columns.map((label) => cell(run, label)),
        bm25Cell(run)
      ]),
      [
        "**all**",
        int(sum(evals.map((run) => run.eval.asked))),
        ...columns.map(total),
        share(sum(withBm25.map((run) => bm25Of(run) ?? 0)), sum(withBm25.map((run) => run.eval.asked)))
      ]
    ]
  )
}

const byKind = (evals: ReadonlyArray<EvalRun>): string => {
  const kindCell = (runs: ReadonlyArray<EvalRun>, label: string, kind: string) => {
    const groups = runs.flatMap((run) => result(run, label)?.byKind.filter((k) => k.kind === kind) ?? [])
    return groups.length === 0 ? "-" : share(sum(groups.map((g) => g.inContext)), sum(groups.map((g) => g.asked)))
  }
  const asked = (runs: ReadonlyArray<EvalRun>, kind: string) =>
    sum(runs.map((run) => run.eval.results[0]?.byKind.find((k) => k.kind === kind)?.asked ?? 0))
  const header: ReadonlyArray<readonly [string, Align]> = [
    ["kind", "left"],
    ["asked", "right"],
    ...columns.map((label): readonly [string, Align] => [titles[label], "right"])
  ]
  const typed = evals.filter((run) => (run.eval.results[0]?.byKind.length ?? 0) > 0)
  return [
    `Over the ${typed.length} sets whose questions have kinds:`,
    "",
    table(
      header,
      kinds(typed).map((
        kind
      ) => [kind, int(asked(typed, kind)), ...columns.map((label) => kindCell(typed, label, kind))])
    ),
    "",
    "By set:",
    "",
    table(
      [["set", "left"], ...header],
      typed.flatMap((run) =>
        kinds([run]).map((kind) => [
          run.set,
          kind,
          int(asked([run], kind)),
          ...columns.map((label) => kindCell([run], label, kind))
        ])
      )
    )
  ].join("\n")
}

const usersTable = (evals: ReadonlyArray<EvalRun>): string => {
  const sets = evals.filter(acrossConversations)
  if (sets.length === 0) return "No set in this run asks its questions in a new conversation."
  const cell = (run: EvalRun, label: string) => {
    const r = result(run, label)
    return r === undefined ? "-" : percentOf(r.inContext, run.eval.asked)
  }
  const noUser = (run: EvalRun) => {
    const counts = run.eval.results.flatMap((r) => r.noUser === null ? [] : [r.noUser])
    return counts.length === 0 ? "-" : percentOf(Math.max(...counts), run.eval.asked)
  }
  return table(
    [
      ["set", "left"],
      ["questions", "right"],
      ["summarization, no query", "right"],
      ["hierarchical, no query", "right"],
      ["summarization + recall", "right"],
      ["hierarchical + recall", "right"],
      ["BM25 over the user's turns", "right"],
      ["the same memory without the user (best run)", "right"]
    ],
    sets.map((run) => {
      const bm25 = bm25Of(run)
      return [
        run.set,
        int(run.eval.asked),
        cell(run, labels.summarization),
        cell(run, labels.hierarchical),
        cell(run, labels.summarizationRecall),
        cell(run, labels.hierarchicalRecall),
        bm25 === null ? "-" : percentOf(bm25, run.eval.asked),
        noUser(run)
      ]
    })
  )
}

const recallAtK = (evals: ReadonlyArray<EvalRun>): string => {
  const cell = (run: EvalRun, label: string) => {
    const all = result(run, label)?.recallAtK?.find((g) => g.questions === "all")
    return all === undefined
      ? "-"
      : all.atK.map((at) => percentOf(at.hits, all.asked).replace(" %", "")).join(" / ") + " %"
  }
  const ks = evals.flatMap((run) => run.eval.results.flatMap((r) => r.recallAtK ?? []))[0]?.atK.map((at) => at.k) ??
    []
  return [
    `Questions whose answer turn the search ranks in its top ${ks.join(" / ")} turns:`,
    "",
    table(
      [["set", "left"], ["questions", "right"], ["summarization + recall", "right"], [
        "hierarchical + recall",
        "right"
      ]],
      evals.map((run) => [
        run.set,
        int(run.eval.asked),
        cell(run, labels.summarizationRecall),
        cell(run, labels.hierarchicalRecall)
      ])
    )
  ].join("\n")
}

const cost = (evals: ReadonlyArray<EvalRun>): string => {
  const calls = (run: EvalRun, label: string) => {
    const r = result(run, label)
    return r === undefined
      ? "-"
      : `${int(r.summarizations)} (${(r.summarizerInputTokens / Math.max(1, r.tokensStored)).toFixed(2)}x)`
  }
  return table(
    [
      ["set", "left"],
      ["tokens stored", "right"],
      ["summarization: calls (read / stored)", "right"],
      ["hierarchical: calls (read / stored)", "right"],
      ["context tokens: median, max", "right"],
      ["turns left out, summarizing runs", "right"],
      ["sliding window: turns left out", "right"]
    ],
    evals.map((run) => {
      const results = run.eval.results
      const summarizing = results.filter((r) => r.strategy !== "sliding-window")
      const window = result(run, labels.window)
      const medians = results.map((r) => r.contextTokensMedian)
      return [
        run.set,
        int(results[0]?.tokensStored ?? 0),
        calls(run, labels.summarization),
        calls(run, labels.hierarchical),
        `${int(Math.min(...medians))}-${int(Math.max(...medians))}, ${
          int(Math.max(...results.map((r) => r.contextTokensMax)))
        }`,
        `at ${int(Math.max(0, ...summarizing.map((r) => r.turnsWithOmissions)))} turns`,
        window === undefined ? "-" : `at ${int(window.turnsWithOmissions)} turns`
      ]
    })
  )
}

/** The blocks of docs/evaluation.md. */
export const evaluationBlocks = (evals: ReadonlyArray<EvalRun>): ReadonlyArray<Block> =>
  ([
    ["eval-run", evalRun],
    ["eval-sets", evalSets],
    ["eval-answers", answers],
    ["eval-kinds", byKind],
    ["eval-users", usersTable],
    ["eval-recall", recallAtK],
    ["eval-cost", cost]
  ] as const).map(([name, write]) => ({ document: "docs/evaluation.md", name, text: write(evals) }))
