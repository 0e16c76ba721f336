import * as MemoryRepository from "../src/layers/store/MemoryRepository.js"
import { repositoryContract } from "./contracts/RepositoryContract.js"

repositoryContract("in-memory", MemoryRepository.layer)
