/** The Codex CLI version ./generated was produced from (by ./generate.mjs). */
export const CODEX_PROTOCOL_VERSION = "0.171.0"
