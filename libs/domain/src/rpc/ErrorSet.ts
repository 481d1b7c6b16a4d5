/** A frozen error class as a set holds it: constructible, with its code. */
type ErrorClass<E> = (abstract new (...args: never) => E) & { readonly _tag: string }

/**
 * What an RPC method may fail with (docs/rpc.md, "Error codes" by method): a set of frozen error
 * classes. The server passes a handler's failure on only when the set has it, and the client
 * accepts a decoded error only when the called method's set (or the envelope's) has it.
 */
export interface ErrorSet<E> {
  readonly classes: ReadonlyArray<ErrorClass<E>>
  readonly has: (value: unknown) => value is E
}

export type ErrorOf<S> = S extends ErrorSet<infer E> ? E : never

export const errorSet = <const C extends ReadonlyArray<ErrorClass<unknown>>>(
  ...classes: C
): ErrorSet<InstanceType<C[number]>> => ({
  classes: classes as unknown as ReadonlyArray<ErrorClass<InstanceType<C[number]>>>,
  has: (value): value is InstanceType<C[number]> => classes.some((c) => value instanceof c)
})

/** The set of a method that fails with no frozen error of its own (the envelope's codes still apply). */
export const NoErrors: ErrorSet<never> = errorSet()
