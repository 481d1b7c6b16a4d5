export {
  runCli,
  serverfs
} from "./Cli.js"
export { ConfigurationLive } from "./ConfigurationLive.js"
export {
  configCheck,
  configCommand,
  renderReport,
  reportJson,
  summarize
} from "./commands/configCheck.js"
export { checksJson, doctorCommand, renderChecks, runDoctor } from "./commands/doctor.js"
export { type CheckResult, type CheckStatus, exitCodeOf } from "./doctor/Check.js"
