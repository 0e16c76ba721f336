import * as MemoryRepository from "../src/layers/store/MemoryRepository.js"
import { contextSettingsContract } from "./contracts/ContextSettingsContract.js"
import { recallContract } from "./contracts/RecallContract.js"
import { repositoryContract } from "./contracts/RepositoryContract.js"

repositoryContract("in-memory", MemoryRepository.layer)
contextSettingsContract("in-memory", MemoryRepository.layer)
recallContract("in-memory", MemoryRepository.layer)
