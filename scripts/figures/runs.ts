/**
 * The runs the documents' figures come from, as the bench and `eval` write them: only the fields
 * the tables read (the files hold more).
 */
import { Schema } from "effect"

const Stat = Schema.Struct({ median: Schema.Number, p99: Schema.Number, runs: Schema.Number, warmup: Schema.Number })

const Trips = Schema.Struct({ max: Schema.Number, mean: Schema.Number })

/** A number the bench writes as null when it could not be measured (NaN in JSON). */
const Measured = Schema.NullOr(Schema.Number)

/** The machine a run ran on. */
export const Machine = Schema.Struct({
  cpu: Schema.String,
  cores: Schema.Number,
  memoryGiB: Schema.Number,
  node: Schema.String,
  os: Schema.String,
  loadAverage1mAtStart: Schema.Number
})

/** The code a run ran. */
export const Code = Schema.Struct({
  version: Schema.String,
  commit: Schema.NullOr(Schema.String),
  commitDate: Schema.NullOr(Schema.String),
  uncommittedChanges: Schema.NullOr(Schema.Boolean)
})

const PerTurn = Schema.Struct({
  rows: Schema.Array(Schema.Struct({
    store: Schema.String,
    strategy: Schema.String,
    memory: Stat,
    addMessages: Stat,
    getContext: Stat,
    baseline: Stat,
    ratioOfMedians: Schema.Number
  })),
  roundTrips: Schema.Array(Schema.Struct({
    store: Schema.String,
    strategy: Schema.String,
    turns: Schema.Number,
    addMessages: Trips,
    getContext: Trips
  }))
})

const History = Schema.Struct({
  warmup: Schema.Number,
  runs: Schema.Number,
  stores: Schema.Array(Schema.Struct({
    store: Schema.String,
    byLength: Schema.Array(Schema.Struct({ messages: Schema.Number, figure: Stat })),
    ratiosOfMedians: Schema.Struct({ "100000/100": Measured, "100000/10000": Measured })
  }))
})

const Latency = Schema.Struct({ median: Schema.Number, p95: Schema.Number })

const Recall = Schema.Struct({
  warmup: Schema.Number,
  runs: Schema.Number,
  stores: Schema.Array(Schema.Struct({
    store: Schema.String,
    byLength: Schema.Array(Schema.Struct({
      messages: Schema.Number,
      all: Latency,
      identifierTop1: Measured,
      context: Latency
    })),
    ratiosOfMedians: Schema.Struct({ "100000/1000": Measured, "10000/1000": Measured }),
    contextRatio: Measured
  }))
})

const RecallCost = Schema.Struct({
  topK: Schema.Number,
  rows: Schema.Array(Schema.Struct({
    store: Schema.String,
    counter: Schema.String,
    messages: Schema.Number,
    context: Stat,
    plain: Stat,
    ratioOfMedians: Schema.Number,
    roundTrips: Schema.NullOr(Trips),
    meanRecalledTurns: Schema.Number
  }))
})

const Hybrid = Schema.Struct({
  warmup: Schema.Number,
  runs: Schema.Number,
  dimensions: Schema.Number,
  stores: Schema.Array(Schema.Struct({
    store: Schema.String,
    rows: Schema.Array(Schema.Struct({ messages: Schema.Number, search: Schema.Number, store64: Schema.Number })),
    /** A search across a user's conversations; runs before it was measured have none. */
    user: Schema.optional(Schema.Struct({
      conversations: Schema.Number,
      messages: Schema.Number,
      scanLimit: Schema.Number,
      search: Schema.Number
    }))
  }))
})

const Throughput = Schema.Struct({
  rows: Schema.Array(Schema.Struct({
    store: Schema.String,
    batchSize: Schema.Number,
    call: Stat,
    messagesPerSecond: Schema.Number,
    speedupOverBatchOfOne: Schema.Number
  }))
})

const Summarizer = Schema.Struct({
  rows: Schema.Array(Schema.Struct({
    mode: Schema.String,
    turns: Schema.Number,
    conversationTokens: Schema.Number,
    runs: Schema.Number,
    calls: Schema.Number,
    inputTokens: Schema.Number,
    outputTokens: Schema.Number,
    tokensReadPerConversationToken: Schema.Number
  })),
  growthWhenDoubled: Schema.Array(Schema.Struct({
    mode: Schema.String,
    calls: Schema.Number,
    inputTokens: Schema.Number,
    outputTokens: Schema.Number,
    tokensReadPerConversationToken: Schema.Number
  }))
})

const Policies = Schema.Struct({
  turns: Schema.Number,
  budget: Schema.Number,
  rows: Schema.Array(Schema.Struct({
    policy: Schema.String,
    calls: Schema.Number,
    inputTokensPerStoredToken: Schema.Number,
    turnsOmittedSum: Schema.Number,
    turnsWithOmission: Schema.Number,
    turnsOmittedAtEnd: Schema.Number,
    prefixChanges: Schema.Number,
    pairs: Schema.Number,
    meanContextTokens: Schema.Number
  }))
})

const TokenCounting = Schema.Struct({
  bytes: Schema.Number,
  messages: Schema.Number,
  rows: Schema.Array(Schema.Struct({
    counter: Schema.String,
    msPerMB: Schema.Number,
    msPerMBColdCache: Measured,
    tokensPerMB: Schema.Number,
    addMessagesPerSecond: Schema.Number,
    getContextSummarized: Stat
  })),
  comparison: Schema.Struct({
    exactCostPerMBOverApproximate: Schema.Number,
    approximateTokensOverExact: Schema.Number,
    addMessagesApproximateOverExact: Schema.Number
  }),
  pathological: Schema.Struct({
    rows: Schema.Array(Schema.Struct({
      text: Schema.String,
      bySize: Schema.Array(Schema.Struct({ bytes: Schema.Number, msPerKB: Schema.Number })),
      perKB1MBOver10KB: Schema.Number,
      plainMsPerKB10KB: Measured
    }))
  })
})

const TokenizedOnce = Schema.Struct({
  everyMessageCountedOnce: Schema.Boolean,
  rows: Schema.Array(Schema.Struct({
    mode: Schema.String,
    turns: Schema.Number,
    messagesStored: Schema.Number,
    summarizations: Schema.Number,
    messageCountCalls: Schema.Number,
    countCallsPerGetContext: Schema.Number
  }))
})

const Load = Schema.Struct({
  row: Schema.Struct({
    store: Schema.String,
    writers: Schema.Number,
    conversations: Schema.Number,
    instances: Schema.Number,
    turnsPerWriter: Schema.Number,
    turnsAdded: Schema.Number,
    addFailures: Schema.Number,
    contextFailures: Schema.Number,
    lost: Schema.Number,
    duplicated: Schema.Number,
    split: Schema.Number,
    seqGaps: Schema.Number,
    addMessages: Stat,
    getContext: Stat,
    freshShare: Schema.Number,
    summarizations: Schema.Number,
    sessions: Schema.Struct({ meanIdleInTransaction: Schema.Number, maxIdleInTransaction: Schema.Number })
  })
})

const Open = Schema.Struct({
  runs: Schema.Number,
  rows: Schema.Array(Schema.Struct({
    store: Schema.String,
    median: Schema.Number,
    p99: Schema.Number,
    rssMiB: Schema.Number,
    aboveMemoryMiB: Schema.Number
  }))
})

const ByUsers = Schema.Struct({
  existing: Schema.Struct({ "1": Measured, "10000": Measured }),
  new: Schema.Struct({ "1": Measured, "10000": Measured })
})

const Users = Schema.Struct({
  conversations: Schema.Number,
  messagesPerConversation: Schema.Number,
  users: Schema.Number,
  rows: Schema.Array(Schema.Struct({
    store: Schema.String,
    series: Schema.Array(Schema.Struct({
      users: Schema.Number,
      call: Schema.Literal("user", "new", "plain", "whole"),
      figure: Stat,
      roundTrips: Schema.NullOr(Trips)
    })),
    userOverConversation: ByUsers,
    /** Against one conversation that holds the user's whole history (runs that time it). */
    userOverWhole: Schema.optional(ByUsers),
    manyOverOne: Schema.Struct({ user: Measured, new: Measured, plain: Measured, whole: Schema.optional(Measured) })
  }))
})

/** A run of `npm run bench`: the sections it ran, each absent when it was not asked for. */
export const BenchRun = Schema.Struct({
  startedAt: Schema.String,
  machine: Machine,
  code: Code,
  settings: Schema.Struct({ quick: Schema.Boolean, scale: Schema.Number }),
  stores: Schema.Array(Schema.String),
  totalSeconds: Schema.Number,
  loadAverage1mAtEnd: Schema.Number,
  sections: Schema.Struct({
    perTurn: Schema.optional(PerTurn),
    getContextByHistoryLength: Schema.optional(History),
    searchByConversationLength: Schema.optional(Recall),
    recallCost: Schema.optional(RecallCost),
    hybridVectorSearch: Schema.optional(Hybrid),
    addMessagesThroughput: Schema.optional(Throughput),
    summarizerCost: Schema.optional(Summarizer),
    contextPolicies: Schema.optional(Policies),
    tokenCounting: Schema.optional(TokenCounting),
    tokenizedOnce: Schema.optional(TokenizedOnce),
    load: Schema.optional(Load),
    open: Schema.optional(Open),
    userScopedContext: Schema.optional(Users)
  })
})

/** A run of `npm run bench`. */
export type BenchRun = typeof BenchRun.Type

/** One strategy's figures in an `eval` run. */
export const StrategyResult = Schema.Struct({
  strategy: Schema.String,
  recall: Schema.Boolean,
  label: Schema.String,
  inContext: Schema.Number,
  byKind: Schema.Array(Schema.Struct({ kind: Schema.String, inContext: Schema.Number, asked: Schema.Number })),
  byAge: Schema.Array(Schema.Struct({ age: Schema.String, inContext: Schema.Number, asked: Schema.Number })),
  recallAtK: Schema.NullOr(Schema.Array(Schema.Struct({
    questions: Schema.String,
    asked: Schema.Number,
    atK: Schema.Array(Schema.Struct({ k: Schema.Number, hits: Schema.Number, allTurns: Schema.Number }))
  }))),
  noUser: Schema.NullOr(Schema.Number),
  bm25: Schema.NullOr(Schema.Number),
  contextTokensMedian: Schema.Number,
  contextTokensMax: Schema.Number,
  summarizations: Schema.Number,
  summarizerInputTokens: Schema.Number,
  summarizerOutputTokens: Schema.Number,
  tokensStored: Schema.Number,
  turnsWithOmissions: Schema.Number,
  maxTurnsOmitted: Schema.Number
})

/** One strategy's figures in an `eval` run. */
export type StrategyResult = typeof StrategyResult.Type

/** A run of `eval` on one question set, as `npm run figures:eval` writes it. */
export const EvalRun = Schema.Struct({
  set: Schema.String,
  command: Schema.String,
  startedAt: Schema.String,
  seconds: Schema.Number,
  machine: Machine,
  code: Code,
  eval: Schema.Struct({
    questions: Schema.String,
    configuration: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    asked: Schema.Number,
    results: Schema.Array(StrategyResult)
  })
})

/** A run of `eval` on one question set. */
export type EvalRun = typeof EvalRun.Type

/** Everything the documents are written from. */
export interface Runs {
  readonly bench: BenchRun
  readonly evals: ReadonlyArray<EvalRun>
}
