/**
 * The generated blocks of docs/performance.md, from a bench run.
 */
import {
  type Align,
  type Block,
  codeLine,
  date,
  int,
  machineLine,
  ms,
  notMeasured,
  percentOf,
  significant,
  table,
  times
} from "./format.js"
import type { BenchRun } from "./runs.js"

const benchRun = (bench: BenchRun): string =>
  [
    `One run of \`npm run bench\` started ${date(bench.startedAt)} on ${codeLine(bench.code)}.`,
    `Machine: ${
      machineLine(bench)
    }; load average ${bench.machine.loadAverage1mAtStart} at the start and ${bench.loadAverage1mAtEnd} at the end (the machine is shared).`,
    `Stores: ${bench.stores.join(", ")}. Runs: scale ${bench.settings.scale}${
      bench.settings.quick ? " (`BENCH_QUICK`)" : ""
    }; ${Math.round(bench.totalSeconds)} s in all.`
  ].join("\n")

const perTurn = (bench: BenchRun): string => {
  const section = bench.sections.perTurn
  if (section === undefined) return notMeasured
  return table(
    [
      ["store", "left"],
      ["strategy", "left"],
      ["median", "right"],
      ["p99", "right"],
      ["add / context (medians)", "right"],
      ["plain array", "right"],
      ["x plain array", "right"],
      ["runs", "right"]
    ],
    section.rows.map((r) => [
      r.store,
      r.strategy,
      ms(r.memory.median),
      ms(r.memory.p99),
      `${significant(r.addMessages.median)} / ${ms(r.getContext.median)}`,
      ms(r.baseline.median),
      times(r.ratioOfMedians),
      `${int(r.memory.runs)} after ${int(r.memory.warmup)}`
    ])
  )
}

export const trips = (t: { readonly max: number; readonly mean: number }): string =>
  t.mean.toFixed(2) === t.max.toFixed(2) ? int(t.max) : `${int(t.max)} (mean ${t.mean.toFixed(2)})`

const roundTrips = (bench: BenchRun): string => {
  const section = bench.sections.perTurn
  if (section === undefined) return notMeasured
  return table(
    [["store", "left"], ["strategy", "left"], ["turns", "right"], ["`addMessages`", "right"], [
      "`getContext`",
      "right"
    ]],
    section.roundTrips.map((r) => [r.store, r.strategy, int(r.turns), trips(r.addMessages), trips(r.getContext)])
  )
}

const history = (bench: BenchRun): string => {
  const section = bench.sections.getContextByHistoryLength
  if (section === undefined) return notMeasured
  const lengths = [...new Set(section.stores.flatMap((s) => s.byLength.map((l) => l.messages)))].sort((a, b) => a - b)
  return [
    `${int(section.runs)} calls after ${int(section.warmup)} warm-up per row; medians.`,
    "",
    table(
      [
        ["store", "left"],
        ...lengths.map((n): readonly [string, Align] => [`${int(n)} messages`, "right"]),
        ["100,000 / 100", "right"],
        ["100,000 / 10,000", "right"]
      ],
      section.stores.map((s) => [
        s.store,
        ...lengths.map((n) => ms(s.byLength.find((l) => l.messages === n)?.figure.median ?? null)),
        times(s.ratiosOfMedians["100000/100"]),
        times(s.ratiosOfMedians["100000/10000"])
      ])
    )
  ].join("\n")
}

const throughput = (bench: BenchRun): string => {
  const section = bench.sections.addMessagesThroughput
  if (section === undefined) return notMeasured
  const stores = [...new Set(section.rows.map((r) => r.store))]
  const sizes = [...new Set(section.rows.map((r) => r.batchSize))].sort((a, b) => a - b)
  const largest = sizes.at(-1) ?? 1
  return table(
    [
      ["store", "left"],
      ...sizes.map((n): readonly [string, Align] => [`batch ${int(n)}`, "right"]),
      [`batch ${int(largest)} / batch 1`, "right"]
    ],
    stores.map((store) => {
      const of = (n: number) => section.rows.find((r) => r.store === store && r.batchSize === n)
      return [
        store,
        ...sizes.map((n) => {
          const row = of(n)
          return row === undefined ? "-" : int(row.messagesPerSecond)
        }),
        times(of(largest)?.speedupOverBatchOfOne ?? null)
      ]
    })
  )
}

const load = (bench: BenchRun): string => {
  const section = bench.sections.load
  if (section === undefined) return notMeasured
  const r = section.row
  return [
    `${r.store}: ${int(r.writers)} writers on ${int(r.conversations)} conversations through ${
      int(r.instances)
    } memory layers, ${int(r.turnsPerWriter)} turns each.`,
    "",
    table([["figure", "left"], ["value", "right"]], [
      ["turns added (failed calls)", `${int(r.turnsAdded)} (${int(r.addFailures + r.contextFailures)})`],
      ["lost / duplicated / split / seq gaps", `${r.lost} / ${r.duplicated} / ${r.split} / ${r.seqGaps}`],
      ["`addMessages` median / p99", `${ms(r.addMessages.median)} / ${ms(r.addMessages.p99)}`],
      ["`getContext` median / p99", `${ms(r.getContext.median)} / ${ms(r.getContext.p99)}`],
      ["contexts with a summary not behind", `${(r.freshShare * 100).toFixed(1)} %`],
      ["summarizations applied", int(r.summarizations)],
      [
        "server sessions idle in transaction (mean / max)",
        `${r.sessions.meanIdleInTransaction.toFixed(1)} / ${int(r.sessions.maxIdleInTransaction)}`
      ]
    ])
  ].join("\n")
}

const summarizer = (bench: BenchRun): string => {
  const section = bench.sections.summarizerCost
  if (section === undefined) return notMeasured
  return [
    table(
      [
        ["mode", "left"],
        ["turns", "right"],
        ["conversation tokens", "right"],
        ["summaries", "right"],
        ["skill calls", "right"],
        ["input tokens", "right"],
        ["output tokens", "right"],
        ["tokens read per conversation token", "right"]
      ],
      section.rows.map((r) => [
        r.mode,
        int(r.turns),
        int(r.conversationTokens),
        int(r.runs),
        int(r.calls),
        int(r.inputTokens),
        int(r.outputTokens),
        r.tokensReadPerConversationToken.toFixed(2)
      ])
    ),
    "",
    "When the conversation doubles:",
    "",
    table(
      [
        ["mode", "left"],
        ["calls", "right"],
        ["input tokens", "right"],
        ["output tokens", "right"],
        ["tokens read per conversation token", "right"]
      ],
      section.growthWhenDoubled.map((g) => [
        g.mode,
        times(g.calls),
        times(g.inputTokens),
        times(g.outputTokens),
        times(g.tokensReadPerConversationToken)
      ])
    )
  ].join("\n")
}

const policies = (bench: BenchRun): string => {
  const section = bench.sections.contextPolicies
  if (section === undefined) return notMeasured
  return [
    `One conversation of ${int(section.turns)} turns per row, budget ${int(section.budget)}.`,
    "",
    table(
      [
        ["policy", "left"],
        ["summarizer calls", "right"],
        ["input / stored tokens", "right"],
        ["turns omitted (sum, turns with any, at the end)", "left"],
        ["prefix kept", "left"],
        ["mean context tokens", "right"]
      ],
      section.rows.map((r) => [
        r.policy,
        int(r.calls),
        r.inputTokensPerStoredToken.toFixed(2),
        `${int(r.turnsOmittedSum)}, ${int(r.turnsWithOmission)}, ${int(r.turnsOmittedAtEnd)}`,
        `${int(r.pairs - r.prefixChanges)} of ${int(r.pairs)} (${percentOf(r.pairs - r.prefixChanges, r.pairs)})`,
        int(r.meanContextTokens)
      ])
    )
  ].join("\n")
}

const tokenCounting = (bench: BenchRun): string => {
  const section = bench.sections.tokenCounting
  if (section === undefined) return notMeasured
  const c = section.comparison
  return [
    `A corpus of ${int(section.messages)} messages, ${int(section.bytes)} bytes of UTF-8.`,
    "",
    table(
      [
        ["counter", "left"],
        ["ms per MB", "right"],
        ["ms per MB, cache emptied", "right"],
        ["tokens per MB", "right"],
        ["`addMessages` msg/s (batch 100)", "right"],
        ["`getContext`, summarized conversation", "right"]
      ],
      section.rows.map((r) => [
        r.counter,
        significant(r.msPerMB),
        r.msPerMBColdCache === null ? "n/a" : significant(r.msPerMBColdCache),
        int(r.tokensPerMB),
        int(r.addMessagesPerSecond),
        ms(r.getContextSummarized.median)
      ])
    ),
    "",
    `The exact counter costs ${times(c.exactCostPerMBOverApproximate)} the approximate per MB; \`addMessages\` ` +
    `in batches of 100 runs ${times(c.addMessagesApproximateOverExact)} faster with the approximate one, which counts ${
      times(c.approximateTokensOverExact)
    } the exact tokens on this corpus.`
  ].join("\n")
}

const pathological = (bench: BenchRun): string => {
  const section = bench.sections.tokenCounting
  if (section === undefined) return notMeasured
  const sizes = [...new Set(section.pathological.rows.flatMap((r) => r.bySize.map((s) => s.bytes)))]
    .sort((a, b) => a - b)
  const kb = (bytes: number) => bytes >= 1_000_000 ? `${int(bytes / 1_000_000)} MB` : `${int(bytes / 1000)} KB`
  return table(
    [
      ["text", "left"],
      ...sizes.map((n): readonly [string, Align] => [kb(n), "right"]),
      [`${kb(sizes.at(-1) ?? 0)} / ${kb(sizes[0] ?? 0)}`, "right"],
      [`plain gpt-tokenizer, ${kb(sizes[0] ?? 0)}`, "right"]
    ],
    section.pathological.rows.map((r) => [
      r.text,
      ...sizes.map((n) => {
        const size = r.bySize.find((s) => s.bytes === n)
        return size === undefined ? "-" : significant(size.msPerKB)
      }),
      times(r.perKB1MBOver10KB),
      r.plainMsPerKB10KB === null ? "-" : significant(r.plainMsPerKB10KB)
    ])
  )
}

const tokenizedOnce = (bench: BenchRun): string => {
  const section = bench.sections.tokenizedOnce
  if (section === undefined) return notMeasured
  return [
    table(
      [
        ["mode", "left"],
        ["turns", "right"],
        ["messages stored", "right"],
        ["summaries", "right"],
        ["count calls for messages", "right"],
        ["count calls per `getContext`", "right"]
      ],
      section.rows.map((r) => [
        r.mode,
        int(r.turns),
        int(r.messagesStored),
        int(r.summarizations),
        int(r.messageCountCalls),
        int(r.countCallsPerGetContext)
      ])
    ),
    "",
    section.everyMessageCountedOnce
      ? "Every stored message was counted exactly once."
      : "Some stored message was counted more than once."
  ].join("\n")
}

const recallLatency = (bench: BenchRun): string => {
  const section = bench.sections.searchByConversationLength
  if (section === undefined) return notMeasured
  return [
    `${int(section.runs)} searches per length after ${int(section.warmup)} warm-up.`,
    "",
    table(
      [
        ["store", "left"],
        ["messages", "right"],
        ["search median", "right"],
        ["search p95", "right"],
        ["best hit holds the id", "right"],
        ["x vs 1,000", "right"],
        ["`getContext` + query median", "right"],
        ["x vs 1,000", "right"]
      ],
      section.stores.flatMap((s) =>
        s.byLength.map((l) => [
          s.store,
          int(l.messages),
          ms(l.all.median),
          ms(l.all.p95),
          l.identifierTop1 === null ? "-" : `${Math.round(l.identifierTop1 * 100)} %`,
          l.messages === 100_000
            ? times(s.ratiosOfMedians["100000/1000"])
            : l.messages === 10_000
            ? times(s.ratiosOfMedians["10000/1000"])
            : "",
          ms(l.context.median),
          l.messages === 100_000 ? times(s.contextRatio) : ""
        ])
      )
    )
  ].join("\n")
}

const recallCost = (bench: BenchRun): string => {
  const section = bench.sections.recallCost
  if (section === undefined) return notMeasured
  return table(
    [
      ["store", "left"],
      ["counter", "left"],
      ["messages", "right"],
      ["`getContext` + query", "right"],
      [`BM25 top-${section.topK} + window`, "right"],
      ["ratio", "right"],
      ["round trips", "right"],
      ["runs", "right"]
    ],
    section.rows.map((r) => [
      r.store,
      r.counter,
      int(r.messages),
      ms(r.context.median),
      ms(r.plain.median),
      times(r.ratioOfMedians),
      r.roundTrips === null ? "" : trips(r.roundTrips),
      `${int(r.context.runs)} after ${int(r.context.warmup)}`
    ])
  )
}

const hybrid = (bench: BenchRun): string => {
  const section = bench.sections.hybridVectorSearch
  if (section === undefined) return notMeasured
  return [
    `${section.dimensions} dimensions; ${int(section.runs)} searches after ${int(section.warmup)} warm-up.`,
    "",
    table(
      [
        ["store", "left"],
        ["messages", "right"],
        ["vector search", "right"],
        ["x vs the shortest", "right"],
        ["storing 64 vectors", "right"]
      ],
      section.stores.flatMap((s) => [
        ...s.rows.map((r, i) => [
          s.store,
          int(r.messages),
          ms(r.search),
          i === 0 ? "" : times(r.search / (s.rows[0]?.search ?? r.search)),
          ms(r.store64)
        ]),
        ...(s.user === undefined ? [] : [[
          s.store,
          `a user's ${int(s.user.messages)} in ${int(s.user.conversations)} conversations, the newest ${
            int(s.user.scanLimit)
          } compared`,
          ms(s.user.search),
          times(s.user.search / (s.rows[0]?.search ?? s.user.search)),
          ""
        ]])
      ])
    )
  ].join("\n")
}

const open = (bench: BenchRun): string => {
  const section = bench.sections.open
  if (section === undefined) return notMeasured
  return [
    `${int(section.runs)} fresh processes per store.`,
    "",
    table(
      [["store", "left"], ["build median", "right"], ["p99", "right"], ["resident", "right"], [
        "above the in-memory store",
        "right"
      ]],
      section.rows.map((r) => [
        r.store,
        ms(r.median),
        ms(r.p99),
        `${int(r.rssMiB)} MiB`,
        r.aboveMemoryMiB === 0 ? "" : `${int(r.aboveMemoryMiB)} MiB`
      ])
    )
  ].join("\n")
}

const callLabel = {
  user: "a conversation of the user",
  new: "a new conversation of the user",
  plain: "a conversation without a user",
  whole: "one conversation of the user's whole history, no user"
} as const

const users = (bench: BenchRun): string => {
  const section = bench.sections.userScopedContext
  if (section === undefined) return notMeasured
  return [
    `A user of ${int(section.conversations)} conversations of ${
      int(section.messagesPerConversation)
    } messages; \`getContext\` with a query, with the user alone in the database and among ${
      int(section.users)
    } users.`,
    "",
    table(
      [
        ["store", "left"],
        ["users", "right"],
        ["context of", "left"],
        ["median", "right"],
        ["p99", "right"],
        ["x no user", "right"],
        ["x whole history", "right"],
        ["x 1 user", "right"],
        ["round trips", "right"]
      ],
      section.rows.flatMap((r) =>
        r.series.map((s) => {
          const many = s.users !== 1
          const scoped = s.call === "user" ? "existing" : s.call === "new" ? "new" : null
          const count = many ? "10000" : "1"
          return [
            r.store,
            int(s.users),
            callLabel[s.call],
            ms(s.figure.median),
            ms(s.figure.p99),
            scoped === null ? "" : times(r.userOverConversation[scoped][count]),
            scoped === null || r.userOverWhole === undefined ? "" : times(r.userOverWhole[scoped][count]),
            many ? times(r.manyOverOne[s.call] ?? null) : "",
            s.roundTrips === null ? "" : trips(s.roundTrips)
          ]
        })
      )
    )
  ].join("\n")
}

/** The blocks of docs/performance.md. */
export const performanceBlocks = (bench: BenchRun): ReadonlyArray<Block> =>
  ([
    ["bench-run", benchRun],
    ["per-turn", perTurn],
    ["round-trips", roundTrips],
    ["history", history],
    ["throughput", throughput],
    ["load", load],
    ["summarizer", summarizer],
    ["policies", policies],
    ["token-counting", tokenCounting],
    ["pathological", pathological],
    ["tokenized-once", tokenizedOnce],
    ["recall-latency", recallLatency],
    ["recall-cost", recallCost],
    ["hybrid", hybrid],
    ["open", open],
    ["users", users]
  ] as const).map(([name, write]) => ({ document: "docs/performance.md", name, text: write(bench) }))
