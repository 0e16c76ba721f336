/**
 * The fault soak of the hierarchical variant (the soak itself: `faultSoak.ts`).
 */
import { faultSoak } from "./faultSoak.js"

faultSoak("hierarchical")
