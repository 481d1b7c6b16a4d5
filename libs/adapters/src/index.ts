export * from "./fake/ScriptedAdapter.js"
export * from "./fake/ScriptedCommand.js"
export * from "./ProviderAdapter.js"
