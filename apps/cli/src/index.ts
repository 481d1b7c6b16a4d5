export * from "./Cli.js"
export * from "./commands/configCheck.js"
