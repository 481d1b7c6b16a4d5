export {
  runCli,
  serverfs
} from "./Cli.js"
export {
  configCheck,
  configCommand,
  summarize
} from "./commands/configCheck.js"
