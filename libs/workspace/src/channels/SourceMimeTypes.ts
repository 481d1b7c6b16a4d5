/**
 * Text types for source and configuration files, consulted before the `mime-types` table.
 *
 * Why: that table is IANA/Apache-derived and knows media, not code: `.ts` and `.mts` are MPEG
 * transport streams (`video/mp2t`), `.rs` is `application/rls-services+xml`, `.cjs` is
 * `application/node`, and `.tsx`, `.go`, `.py`, `.rb`, `.kt`, … are unknown (octet-stream). A chat
 * host that sees `video/*` or octet-stream treats the file as binary. Every entry here is a
 * `text/*` type so that clients keep treating it as text; where no IANA registration exists the
 * de-facto `text/x-*` name (shared-mime-info, editors) is used. Keys are lower-case extensions
 * without the dot; the lookup is by the last extension only, like `mime-types`.
 */
export const SOURCE_MIME_TYPES: Readonly<Record<string, string>> = Object.freeze({
  ts: "text/x-typescript",
  tsx: "text/x-typescript",
  mts: "text/x-typescript",
  cts: "text/x-typescript",
  cjs: "text/javascript",
  rs: "text/x-rust",
  go: "text/x-go",
  py: "text/x-python",
  pyi: "text/x-python",
  sh: "text/x-shellscript",
  bash: "text/x-shellscript",
  zsh: "text/x-shellscript",
  ksh: "text/x-shellscript",
  toml: "text/x-toml",
  yaml: "text/yaml",
  yml: "text/yaml",
  md: "text/markdown",
  markdown: "text/markdown",
  rb: "text/x-ruby",
  kt: "text/x-kotlin",
  kts: "text/x-kotlin",
  swift: "text/x-swift",
  scala: "text/x-scala",
  cs: "text/x-csharp",
  hpp: "text/x-c",
  hh: "text/x-c",
  php: "text/x-php",
  pl: "text/x-perl",
  pm: "text/x-perl",
  sql: "text/x-sql",
  diff: "text/x-diff",
  patch: "text/x-diff",
  rst: "text/x-rst",
  tex: "text/x-tex",
  proto: "text/x-protobuf",
  graphql: "text/x-graphql",
  gql: "text/x-graphql",
  tf: "text/x-terraform",
  hs: "text/x-haskell",
  ex: "text/x-elixir",
  exs: "text/x-elixir",
  erl: "text/x-erlang",
  clj: "text/x-clojure",
  dart: "text/x-dart",
  zig: "text/x-zig",
  vue: "text/x-vue",
  svelte: "text/x-svelte",
  ps1: "text/x-powershell",
  cfg: "text/plain",
  jsonl: "application/jsonl",
  ndjson: "application/x-ndjson"
})
