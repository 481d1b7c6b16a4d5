import { Options } from "@effect/cli"

/** `--json`: print the command's JSON contract (one document, stable keys) instead of text. */
export const json = Options.boolean("json").pipe(
  Options.withDescription("Print JSON (the command's stable contract) instead of text.")
)
