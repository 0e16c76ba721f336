/**
 * The fault soak of the incremental variant (the soak itself: `faultSoak.ts`).
 */
import { faultSoak } from "./faultSoak.js"

faultSoak("incremental")
