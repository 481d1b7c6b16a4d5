/**
 * Pure normalization of a request path (tool-contracts §5, steps 1–4). No filesystem access:
 * the result is a list of components that the descriptor walk opens one by one.
 *
 * - NUL anywhere → "nul" (ACCESS_DENIED, "path contains NUL bytes");
 * - absolute ("/…") or home-relative ("~…") → "outside";
 * - split on "/" only: a backslash is an ordinary name character, so `..\..\etc` is one name;
 * - "" and "." segments are dropped, ".." pops, popping past the root → "outside".
 */
export type NormalizedPath =
  | { readonly _tag: "ok"; readonly components: ReadonlyArray<string> }
  | { readonly _tag: "nul" }
  | { readonly _tag: "outside" }

export const normalizeRequestPath = (raw: string): NormalizedPath => {
  if (raw.includes("\0")) return { _tag: "nul" }
  if (raw.startsWith("/") || raw.startsWith("~")) return { _tag: "outside" }
  const components: string[] = []
  for (const segment of raw.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") {
      if (components.length === 0) return { _tag: "outside" }
      components.pop()
      continue
    }
    components.push(segment)
  }
  return { _tag: "ok", components }
}

export const joinComponents = (components: ReadonlyArray<string>): string => components.join("/")
