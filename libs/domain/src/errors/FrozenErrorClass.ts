import type { Cause } from "effect"
import { Data } from "effect"

/**
 * How a frozen error declares its fields: a string, a number, an optional string, or one of a few
 * literals. The kinds are what the RPC client needs to rebuild an error from its wire message
 * (rpc/WireError.ts: only a class whose fields are all plain strings can be read back).
 */
export type FieldKind = "string" | "number" | "optional string" | { readonly oneOf: ReadonlyArray<string> }
export type Fields = { readonly [name: string]: FieldKind }

/** The fields of an error about a path in a workdir (its message renders them with `location`). */
export const At = { workdir: "string", path: "string" } as const

type FieldType<K> = K extends "string" | "optional string"
  ? string
  : K extends "number"
    ? number
    : K extends { readonly oneOf: ReadonlyArray<infer L> }
      ? L
      : never

/** The constructor's argument and the instance's own fields. */
export type FieldValues<F extends Fields> = {
  readonly [N in keyof F as F[N] extends "optional string" ? never : N]: FieldType<F[N]>
} & { readonly [N in keyof F as F[N] extends "optional string" ? N : never]?: FieldType<F[N]> }

export interface FrozenErrorClass<Tag extends string, F extends Fields> {
  new (
    ...fields: keyof F extends never ? [fields?: FieldValues<F>] : [fields: FieldValues<F>]
  ): Cause.YieldableError & { readonly _tag: Tag } & FieldValues<F>
  /** The code, as on each instance. */
  readonly _tag: Tag
  readonly fields: F
}

/**
 * The base of a frozen error's class (tool-contracts §8): a `Data.TaggedError` whose tag is the
 * code, with its fields declared by kind. Not a `Schema.TaggedError`: nothing decodes these
 * classes through a schema, and building ~110 class schemas (their ASTs, a union of all of them)
 * was a sixth of serverfs-mcp's start-up memory and 1,300 page faults of its cold start
 * (docs/performance.md, "Cold start is memory touched").
 */
export const FrozenErrorClass = <const Tag extends string, const F extends Fields>(
  tag: Tag,
  fields: F
): FrozenErrorClass<Tag, F> =>
  class extends Data.TaggedError(tag)<Record<string, unknown>> {
    static readonly _tag = tag
    static readonly fields = fields
  } as unknown as FrozenErrorClass<Tag, F>
