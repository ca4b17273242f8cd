// What an identify answer may say to a caller that does not own the environment (DECISIONS.md
// "Palm captures and matching"): a read-only project, another organization's terminal with server
// lookup. Exact scores below the threshold would guide a forged palm uphill, and candidates below
// it would name members the palm does not match; so such a caller sees candidates at or above the
// threshold only, and a NotFound's score rounded down to one decimal. The owner sees everything.
import type { ProjectRow } from '../../store/projects.js'
import type { Candidate, IdentifyStatus } from './identify-decision.js'

/** Does the project's organization own its environment (and so see exact scores)? */
export const ownsEnvironment = (project: Pick<ProjectRow, 'org_id' | 'environment_owner_org_id'>): boolean =>
  project.environment_owner_org_id === project.org_id

/** A score shown to one who does not own the environment: rounded down to one decimal. */
export const coarseScore = (score: number): number => Math.floor(score * 10) / 10

export interface Disclosable {
  status: IdentifyStatus
  match_score: number
  candidates: Candidate[]
}

/** The answer as this caller may see it. */
export function disclosedTo<T extends Disclosable>(project: Pick<ProjectRow, 'org_id' | 'environment_owner_org_id'>, threshold: number, answer: T): T {
  if (ownsEnvironment(project)) return answer
  return {
    ...answer,
    match_score: answer.status === 'NotFound' ? coarseScore(answer.match_score) : answer.match_score,
    candidates: answer.candidates.filter((candidate) => candidate.match_score >= threshold),
  }
}
