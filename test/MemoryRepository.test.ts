import * as MemoryRepository from "../src/layers/store/MemoryRepository.js"
import { contextSettingsContract } from "./contracts/ContextSettingsContract.js"
import { recallContract } from "./contracts/RecallContract.js"
import { storeContract } from "./contracts/StoreContract.js"

storeContract("in-memory", MemoryRepository.layer)
contextSettingsContract("in-memory", MemoryRepository.layer)
recallContract("in-memory", MemoryRepository.layer)
