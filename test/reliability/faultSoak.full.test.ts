/**
 * The fault soak of the full variant (the soak itself: `faultSoak.ts`).
 */
import { faultSoak } from "./faultSoak.js"

faultSoak("full")
