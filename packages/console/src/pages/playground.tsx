// The identify playground: what curl cannot show. Pick a seeded synthetic person (the same
// generator as `palmvein capture --synthetic`) or drop a PVT1 capture, identify it with an API key
// of the project (biometrics take API keys only), and see the decision, the score against the
// environment's threshold, the candidates and the latency. Synthetic persons can be enrolled into
// a member too, so a Found and a NotFound are two clicks away.
import { createSyntheticPopulation, DEMO_CAPTURES } from 'palmvein-synthetic'
import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api'
import { Field, ProblemView, useLoad } from '../components'

type Hand = 'left' | 'right'
type IdentifyResult = Schemas['IdentifyResult']
const SYNTHETIC_SEED = 7

function base64url(bytes: Uint8Array): string {
  let text = ''
  for (const byte of bytes) text += String.fromCharCode(byte)
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function synthetic(environment: Schemas['Environment'], identity: number, hand: Hand, session: number, attempt: number): string {
  const population = createSyntheticPopulation({
    seed: SYNTHETIC_SEED,
    dimension: environment.dimension,
    identities: identity + 1,
    extractorId: environment.extractor_id,
    ...DEMO_CAPTURES,
  })
  return base64url(population.template(identity, hand, session, attempt, { quality: 90 }))
}

/** A dropped capture: PVT1 bytes, or the base64url text `palmvein capture` prints. */
async function captureOfFile(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer())
  const magic = String.fromCharCode(...bytes.slice(0, 4))
  return magic === 'PVT1' ? base64url(bytes) : new TextDecoder().decode(bytes).trim()
}

function Decision({ result, threshold, latencyMs, names }: { result: IdentifyResult; threshold: number; latencyMs: number; names: Map<string, string> }) {
  const name = (id: string | null) => (id ? (names.get(id) ?? id) : '—')
  return (
    <section aria-labelledby="decision" class="decision">
      <h2 id="decision">
        Decision: <span data-testid="identify-status">{result.status}</span>
      </h2>
      <dl>
        <dt>Member</dt>
        <dd data-testid="identify-member">{name(result.member_id)}</dd>
        <dt>Score</dt>
        <dd>
          <span data-testid="identify-score">{result.match_score.toFixed(4)}</span> against the threshold {threshold.toFixed(2)} (
          {result.match_score >= threshold ? 'at or above' : 'below'})
        </dd>
        <dt>Latency</dt>
        <dd>{latencyMs.toFixed(0)} ms (round trip from this browser)</dd>
      </dl>
      <div class="scale" aria-hidden="true">
        <div class="score-bar" style={{ width: `${result.match_score * 100}%` }} />
        <div class="threshold-mark" style={{ left: `${threshold * 100}%` }} />
      </div>
      {result.candidates && result.candidates.length > 0 && (
        <table>
          <caption>Best candidates</caption>
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Hand</th>
              <th scope="col">Score</th>
            </tr>
          </thead>
          <tbody>
            {result.candidates.map((candidate) => (
              <tr key={candidate.member_id + candidate.hand}>
                <td>{name(candidate.member_id)}</td>
                <td>{candidate.hand}</td>
                <td>{candidate.match_score.toFixed(4)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

type Environment = Schemas['Environment']
type Member = Schemas['Member']

/** The playground's calls (key, identify, enroll) and what they answered. */
function usePlaygroundActions(projectId: string, environment: Environment | undefined, key: string, names: Map<string, string>, reloadMembers: () => void) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const [outcome, setOutcome] = useState<{ result: IdentifyResult; latencyMs: number } | null>(null)
  const [enrolled, setEnrolled] = useState<string | null>(null)
  const withKey = { headers: { authorization: `Bearer ${key}` } }

  const createKey = async (setKey: (key: string) => void) => {
    const result = await call(
      api.POST('/v1/projects/{project_id}/api-keys', { params: { path: { project_id: projectId } }, body: { name: 'console playground' } }),
    )
    if ('problem' in result) return setProblem(result.problem)
    setKey((result.data as Schemas['ApiKeyCreated']).key)
  }
  const identify = async (capture: string) => {
    const started = performance.now()
    const result = await call(
      api.POST('/v1/projects/{project_id}/biometrics/identify', {
        params: { path: { project_id: projectId }, query: { k: 5 } },
        body: { palm: { identify_capture: capture } },
        ...withKey,
      }),
    )
    const latencyMs = performance.now() - started
    if ('problem' in result) {
      setOutcome(null)
      return setProblem(result.problem)
    }
    setProblem(null)
    setOutcome({ result: result.data as IdentifyResult, latencyMs })
  }
  const enroll = async (identity: number, memberId: string) => {
    if (!environment || !memberId) return
    const handOf = (side: Hand) => ({
      enroll_capture: synthetic(environment, identity, side, 0, 0),
      identify_capture: synthetic(environment, identity, side, 0, 1),
    })
    const result = await call(
      api.POST('/v1/projects/{project_id}/biometrics/enroll', {
        params: { path: { project_id: projectId } },
        body: { member_id: memberId, left_hand: handOf('left'), right_hand: handOf('right') },
        ...withKey,
      }),
    )
    if ('problem' in result) return setProblem(result.problem)
    setProblem(null)
    setEnrolled(`Synthetic person ${identity} enrolled as ${names.get(memberId) ?? memberId} (both hands).`)
    reloadMembers()
  }
  return { problem, outcome, enrolled, createKey, identify, enroll }
}

function CredentialSection({ value, onInput, onCreate }: { value: string; onInput: (key: string) => void; onCreate: () => void }) {
  return (
    <section aria-labelledby="credential">
      <h2 id="credential">Credential</h2>
      <p>Identify and enroll take an API key of this project. It stays in this page's memory only.</p>
      <Field label="API key" id="playground-key">
        <input id="playground-key" type="password" autoComplete="off" value={value} onInput={(event) => onInput(event.currentTarget.value)} />
      </Field>
      <button type="button" onClick={onCreate}>
        Create a playground key
      </button>
    </section>
  )
}

/** The probe: a synthetic person's hand, or a dropped capture file; identifies it on request. */
function CaptureSection({
  environment,
  identity,
  onIdentity,
  canIdentify,
  onIdentify,
}: {
  environment: Environment | undefined
  identity: number
  onIdentity: (identity: number) => void
  canIdentify: boolean
  onIdentify: (capture: string) => void
}) {
  const [hand, setHand] = useState<Hand>('right')
  const [dropped, setDropped] = useState<{ name: string; capture: string } | null>(null)
  const drop = async (files: FileList | null | undefined) => {
    const file = files?.[0]
    if (file) setDropped({ name: file.name, capture: await captureOfFile(file) })
  }
  const identify = () => {
    if (environment) onIdentify(dropped?.capture ?? synthetic(environment, identity, hand, 1, 0))
  }
  return (
    <section aria-labelledby="probe">
      <h2 id="probe">Capture</h2>
      <Field label="Synthetic person (seed 7)" id="identity">
        <input
          id="identity"
          type="number"
          min={0}
          max={100000}
          value={identity}
          onInput={(event) => {
            onIdentity(Number(event.currentTarget.value) || 0)
            setDropped(null)
          }}
        />
      </Field>
      <Field label="Hand" id="hand">
        <select id="hand" value={hand} onChange={(event) => setHand(event.currentTarget.value as Hand)}>
          <option value="right">right</option>
          <option value="left">left</option>
        </select>
      </Field>
      <section
        class="drop"
        aria-label="Drop a capture file"
        onDragOver={(event) => event.preventDefault()}
        onDrop={(event) => {
          event.preventDefault()
          void drop(event.dataTransfer?.files)
        }}
      >
        <Field label="Or drop a capture file (PVT1, or the base64url text of palmvein capture)" id="capture-file">
          <input id="capture-file" type="file" onChange={(event) => void drop(event.currentTarget.files)} />
        </Field>
        {dropped && (
          <p>
            Using <strong>{dropped.name}</strong>.{' '}
            <button type="button" onClick={() => setDropped(null)}>
              Use the synthetic person
            </button>
          </p>
        )}
      </section>
      <button type="button" disabled={!canIdentify} onClick={identify}>
        Identify
      </button>
    </section>
  )
}

function EnrollSection({
  members,
  canEnroll,
  enrolled,
  onEnroll,
}: {
  members: Member[]
  canEnroll: boolean
  enrolled: string | null
  onEnroll: (memberId: string) => void
}) {
  const [memberId, setMemberId] = useState('')
  return (
    <section aria-labelledby="enroll">
      <h2 id="enroll">Enroll the synthetic person</h2>
      <Field label="Member" id="enroll-member">
        <select id="enroll-member" value={memberId} onChange={(event) => setMemberId(event.currentTarget.value)}>
          <option value="">Choose a member</option>
          {members.map((member) => (
            <option key={member.member_id} value={member.member_id}>
              {member.display_name}
            </option>
          ))}
        </select>
      </Field>
      <button type="button" disabled={!canEnroll || !memberId} onClick={() => onEnroll(memberId)}>
        Enroll both hands
      </button>
      {enrolled && <p role="status">{enrolled}</p>}
    </section>
  )
}

export function PlaygroundPage({ orgId, projectId }: { orgId: string; projectId: string }) {
  const project = useLoad(() => call(api.GET('/v1/projects/{project_id}', { params: { path: { project_id: projectId } } })), [projectId])
  const environments = useLoad(() => call(api.GET('/v1/organization/{org_id}/environments', { params: { path: { org_id: orgId } } })), [orgId])
  // The enroll picker offers the first members only (the members page lists them all, paged).
  const members = useLoad(
    () => call(api.GET('/v1/projects/{project_id}/members', { params: { path: { project_id: projectId }, query: { page: 1, per_page: 100 } } })),
    [projectId],
  )
  const environment = environments.data?.find((candidate) => candidate.id === project.data?.environment_id)
  const [key, setKey] = useState('')
  const [identity, setIdentity] = useState(0)
  const names = new Map((members.data ?? []).map((member) => [member.member_id, member.display_name] as [string, string]))
  const actions = usePlaygroundActions(projectId, environment, key, names, members.reload)
  const ready = Boolean(key && environment)

  return (
    <>
      <h1>Identify playground</h1>
      <ProblemView problem={project.problem ?? environments.problem} />
      {environment && (
        <p>
          Environment <strong>{environment.name}</strong>: dimension {environment.dimension}, match threshold {environment.match_threshold}, margin{' '}
          {environment.margin}.
        </p>
      )}
      <CredentialSection value={key} onInput={setKey} onCreate={() => void actions.createKey(setKey)} />
      <CaptureSection
        environment={environment}
        identity={identity}
        onIdentity={setIdentity}
        canIdentify={ready}
        onIdentify={(capture) => void actions.identify(capture)}
      />
      <EnrollSection
        members={members.data ?? []}
        canEnroll={ready}
        enrolled={actions.enrolled}
        onEnroll={(memberId) => void actions.enroll(identity, memberId)}
      />
      <ProblemView problem={actions.problem} />
      {actions.outcome && environment && (
        <Decision result={actions.outcome.result} threshold={environment.match_threshold} latencyMs={actions.outcome.latencyMs} names={names} />
      )}
    </>
  )
}
