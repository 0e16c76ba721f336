#!/usr/bin/env bash
# Builds the package, packs it, and checks the tarball as a consumer sees it: the exports map
# resolves, the types check under NodeNext, and a small program runs against the packed files.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run build --silent
work=$(mktemp -d "$PWD/.pack-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
tarball=$(npm pack --silent --pack-destination "$work" | tail -n 1)
mkdir -p "$work/consumer/node_modules/effect-chat-memory"
tar -xzf "$work/$tarball" -C "$work/consumer/node_modules/effect-chat-memory" --strip-components 1

if tar -tzf "$work/$tarball" | grep -qE '(^package/(src|test)/|\.map$)'; then
  echo "check-pack: the tarball holds sources, tests or source maps" >&2
  exit 1
fi
# The template PGlite loads into a new data directory instead of running initdb (tsc copies no assets).
# (grep reads the whole listing: with -q it would stop early, and tar fail on the closed pipe.)
if ! tar -tzf "$work/$tarball" | grep -x 'package/dist/layers/store/internal/pglite-template.tar.gz' >/dev/null; then
  echo "check-pack: the tarball lacks the PGlite template" >&2
  exit 1
fi

# The example agent ships, and checks against the packed types (below) as the app that copies it would.
if ! tar -tzf "$work/$tarball" | grep -x 'package/examples/agent.ts' >/dev/null; then
  echo "check-pack: the tarball lacks examples/agent.ts" >&2
  exit 1
fi

cat >"$work/consumer/package.json" <<'JSON'
{ "name": "consumer", "private": true, "type": "module" }
JSON
cat >"$work/consumer/main.ts" <<'TS'
import { Effect, Layer } from "effect"
import { ApproximateTokenCounter, ChatMemory, SlidingWindowStrategy } from "effect-chat-memory"
import * as MemoryStore from "effect-chat-memory/MemoryStore"
import * as NoopStrategy from "effect-chat-memory/NoopStrategy"

const MemoryLive = ChatMemory.layer.pipe(
  Layer.provideMerge(SlidingWindowStrategy.layer({ tokenBudget: 100 })),
  Layer.provideMerge(MemoryStore.layer),
  Layer.provideMerge(ApproximateTokenCounter.layer)
)
const program = Effect.gen(function*() {
  const memory = yield* ChatMemory.ChatMemoryService
  yield* memory.addMessages("c", [{ role: "user", content: "hello" }, { role: "assistant", content: "hi" }])
  const context = yield* memory.getContext("c")
  // A subpath export resolves too.
  const whole = yield* Effect.provide(
    Effect.flatMap(ChatMemory.ChatMemoryService, (m) => m.addMessages("d", [{ role: "user", content: "x" }])),
    ChatMemory.layer.pipe(
      Layer.provideMerge(NoopStrategy.layer),
      Layer.provideMerge(MemoryStore.layer),
      Layer.provideMerge(ApproximateTokenCounter.layer)
    )
  )
  console.log(`packed ok: ${context.recent.length} messages, ${context.tokenCount} tokens; ${whole.length} via a subpath`)
})
await Effect.runPromise(Effect.provide(program, MemoryLive))
TS
cat >"$work/consumer/tsconfig.json" <<'JSON'
{
  "extends": "../../tsconfig.base.json",
  "compilerOptions": { "noEmit": true, "skipLibCheck": false, "lib": ["ES2022", "DOM"] },
  "files": ["main.ts", "node_modules/effect-chat-memory/examples/agent.ts"]
}
JSON
npx tsc -p "$work/consumer/tsconfig.json" 2>&1 | grep -E "main\.ts|effect-chat-memory/" && { echo "check-pack: the packed types do not check" >&2; exit 1; }
(cd "$work/consumer" && npx tsx main.ts)

# The interface is the subpaths package.json lists by name: a folder path (the previous version's
# layout) or an internal module must fail to import.
for internal in domain/internal/untrusted strategies/internal/metrics layers/store/internal/sql/rows layers/skills/internal/prompts layers/ai/internal/parts layers/internal/service domain/Message layers/store/MemoryStore strategies/Recall; do
  if (cd "$work/consumer" && node --input-type=module -e "await import('effect-chat-memory/$internal')" 2>/dev/null); then
    echo "check-pack: effect-chat-memory/$internal is exported" >&2
    exit 1
  fi
done
echo "internal and folder paths are not exported"

# Installed as an app installs it: a fresh directory outside the repository, effect one patch
# behind ours, the peers at the README's Install line. One copy of effect, no optional store or
# counter package, and a turn on the default layer without a version warning. The bin, without
# @effect/cli (an optional peer), names it and its install command in one line and exits with 1.
cli_range=$(node -p "require('./package.json').peerDependencies['@effect/cli']")
app=$(mktemp -d)
trap 'rm -rf "$work" "$app"' EXIT
cp "$work/$tarball" "$app/"
(
  cd "$app"
  printf '{ "name": "app", "private": true, "type": "module" }\n' >package.json
  npm install --silent --no-audit --no-fund "./$tarball" effect@3.22.3 @effect/ai@^0.37.0 @effect/ai-openai@^0.41.0 \
    @effect/experimental@^0.61.1 @effect/platform@^0.97.2 @effect/platform-node@^0.108.2 @effect/sql@^0.52.1 >/dev/null 2>&1
  copies=$(npm ls effect --all --parseable 2>/dev/null | grep -c '/node_modules/effect$' || true)
  if [ "$copies" != "1" ]; then
    echo "check-pack: the app has $copies copies of effect" >&2
    npm ls effect >&2 || true
    exit 1
  fi
  if [ -d node_modules/@effect/cli ]; then
    echo "check-pack: @effect/cli was installed without being asked for" >&2
    exit 1
  fi
  bin_code=0
  bin_out=$(node_modules/.bin/effect-chat-memory context nope 2>&1) || bin_code=$?
  expected="effect-chat-memory: the command line needs @effect/cli, which is not installed: npm install @effect/cli@$cli_range"
  if [ "$bin_code" != 1 ] || [ "$bin_out" != "$expected" ]; then
    echo "check-pack: the bin without @effect/cli exited with $bin_code and said:" >&2
    echo "$bin_out" >&2
    exit 1
  fi
  echo "bin without @effect/cli, exit $bin_code: $bin_out"
  if [ -d node_modules/@electric-sql/pglite ]; then
    echo "check-pack: PGlite was installed without being asked for" >&2
    exit 1
  fi
  cat >turn.mjs <<'JS'
import { Effect } from "effect"
import { ChatMemory } from "effect-chat-memory"

const turn = Effect.gen(function*() {
  const memory = yield* ChatMemory.ChatMemoryService
  yield* memory.addMessages("c", [{ role: "user", content: "Ship order A-1001 to Lyon." }])
  return yield* memory.getContext("c")
})
const context = await Effect.runPromise(Effect.provide(turn, ChatMemory.layerConfig()))
console.log(`installed ok: effect ${(await import("effect/package.json", { with: { type: "json" } })).default.version}, one copy; a turn: ${context.recent.length} message`)
JS
  output=$(node turn.mjs 2>&1)
  echo "$output"
  if echo "$output" | grep -q "Executing an Effect versioned"; then
    echo "check-pack: a version warning on a turn" >&2
    exit 1
  fi
)
