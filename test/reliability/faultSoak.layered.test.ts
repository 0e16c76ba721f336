/**
 * The fault soak of the layered variant (the soak itself: `faultSoak.ts`).
 */
import { faultSoak } from "./faultSoak.js"

faultSoak("layered")
