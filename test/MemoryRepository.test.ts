import * as MemoryRepository from "../src/layers/MemoryRepository.js"
import { repositoryContract } from "./contracts/RepositoryContract.js"

repositoryContract("in-memory", MemoryRepository.layer)
