/** The guard's schema lives with the lease in libs/workspace; re-exported for the bridge's users. */
export { RecoveryGuard } from "@serverfs/workspace"
