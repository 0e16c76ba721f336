import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import { contextSettingsContract } from "./contracts/ContextSettingsContract.js"
import { recallContract } from "./contracts/RecallContract.js"
import { storeContract } from "./contracts/StoreContract.js"

storeContract("in-memory", MemoryStore.layer)
contextSettingsContract("in-memory", MemoryStore.layer)
recallContract("in-memory", MemoryStore.layer)
