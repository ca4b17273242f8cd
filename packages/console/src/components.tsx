// Small pieces every page uses: a problem's detail (beside the field its errors[].path names), a
// loader for one API call, a copy button.
import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import type { Problem } from './api'

export function ProblemView({ problem }: { problem: Problem | null }) {
  if (!problem) return null
  return (
    <div class="problem" role="alert">
      <strong>{problem.title}</strong> {problem.detail}
      {problem.request_id && <small> (request {problem.request_id})</small>}
    </div>
  )
}

/** The message a problem gives for one field (`/name`), shown next to that field. */
export function fieldError(problem: Problem | null, path: string): string | undefined {
  return problem?.errors?.find((error) => error.path === path)?.message
}

export function Field({ label, id, error, children }: { label: string; id: string; error?: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {error && (
        <span class="field-error" id={`${id}-error`} role="alert">
          {error}
        </span>
      )}
    </div>
  )
}

/** A labelled select of `options`; `any` adds a first, empty choice with that text (the API's "any" is a left-out parameter). */
export function SelectField({
  label,
  id,
  value,
  options,
  any,
  error,
  onChange,
}: {
  label: string
  id: string
  value: string
  options: readonly string[]
  any?: string
  error?: string
  onChange: (value: string) => void
}) {
  return (
    <Field label={label} id={id} error={error}>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        {any !== undefined && <option value="">{any}</option>}
        {options.map((each) => (
          <option key={each} value={each}>
            {each}
          </option>
        ))}
      </select>
    </Field>
  )
}

/** Loads once (and again on `reload()`); `data` stays while a reload runs. */
export function useLoad<T>(load: () => Promise<{ data: T } | { problem: Problem }>, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [version, setVersion] = useState(0)
  useEffect(() => {
    let current = true
    void load().then((result) => {
      if (!current) return
      if ('data' in result) {
        setData(result.data)
        setProblem(null)
      } else setProblem(result.problem)
    })
    return () => {
      current = false
    }
  }, [...deps, version])
  const reload = useCallback(() => setVersion((value) => value + 1), [])
  return { data, problem, reload }
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard.writeText(text).then(() => setCopied(true))
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  )
}

/** A secret the API returns once (a key's plaintext, a webhook's signing secret): shown here until the page is left. */
export function ShownOnce({ id, heading, secret, label, testId }: { id: string; heading: string; secret: string; label: string; testId: string }) {
  return (
    <section class="once" aria-labelledby={id} role="status">
      <h2 id={id}>{heading}</h2>
      <p>Copy it now: it is shown this once and never again.</p>
      <p>
        <code class="secret" data-testid={testId}>
          {secret}
        </code>{' '}
        <CopyButton text={secret} label={label} />
      </p>
    </section>
  )
}

/** Previous and next page of a list the service pages; `last`: this page is the last one. */
export function Pager({ label, page, setPage, last }: { label: string; page: number; setPage: (page: number) => void; last: boolean }) {
  return (
    <nav aria-label={label} class="pages">
      <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>
        Previous page
      </button>
      <button type="button" disabled={last} onClick={() => setPage(page + 1)}>
        Next page
      </button>
    </nav>
  )
}

/** `<input type="datetime-local">` speaks local time without a zone; the API speaks RFC 3339. */
export const toInstant = (local: string) => new Date(local).toISOString()
export const toLocalInput = (date: Date) => new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
export const DAY_MS = 24 * 3600 * 1000

/** A [from, to] window of a list the service pages: `to` empty means "now" at each load, so a refresh shows what just happened. */
export function useTimeWindow() {
  const [from, setFrom] = useState(() => toLocalInput(new Date(Date.now() - DAY_MS)))
  const [to, setTo] = useState('')
  return { from, to, setFrom, setTo, query: () => ({ from: toInstant(from), to: to ? toInstant(to) : new Date().toISOString() }) }
}

export function TimeWindowFields({ id, noun, window }: { id: string; noun: string; window: ReturnType<typeof useTimeWindow> }) {
  return (
    <>
      <Field label={`${noun} from`} id={`${id}-from`}>
        <input id={`${id}-from`} type="datetime-local" value={window.from} onInput={(event) => window.setFrom(event.currentTarget.value)} required />
      </Field>
      <Field label={`${noun} until (empty: now)`} id={`${id}-to`}>
        <input id={`${id}-to`} type="datetime-local" value={window.to} onInput={(event) => window.setTo(event.currentTarget.value)} />
      </Field>
    </>
  )
}

export const when = (value: string | null | undefined) => (value ? new Date(value).toLocaleString() : '—')

type Outcome<T> = { data: T } | { problem: Problem }

/** A form's submission: the call, its refusal (shown beside the fields it names), what follows success. */
export function useSubmit<T>(send: () => Promise<Outcome<T>>, done: (data: T) => void) {
  const [refused, setRefused] = useState<Problem | null>(null)
  const submit = async (event?: Event) => {
    event?.preventDefault()
    const result = await send()
    if ('problem' in result) return setRefused(result.problem)
    setRefused(null)
    done(result.data)
  }
  return { refused, submit }
}

/** An action on a listed item (revoke, erase, delete): its refusal, if any, then the list again. */
export function useAction(after: () => void) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const run = async (request: Promise<Outcome<unknown>>) => {
    const result = await request
    setProblem('problem' in result ? result.problem : null)
    after()
  }
  return { problem, run }
}

/** A form of one text field (a name): organizations, environments, keys, members. */
export function NameForm<T>({
  id,
  heading,
  label,
  field,
  button,
  send,
  done,
}: {
  id: string
  heading: string
  label: string
  field: string
  button: string
  send: (value: string) => Promise<Outcome<T>>
  done: (data: T) => void
}) {
  const [value, setValue] = useState('')
  const { refused, submit } = useSubmit(
    () => send(value),
    (data) => {
      setValue('')
      done(data)
    },
  )
  return (
    <form onSubmit={submit} aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{heading}</h2>
      <Field label={label} id={id} error={fieldError(refused, field)}>
        <input id={id} value={value} onInput={(event) => setValue(event.currentTarget.value)} required />
      </Field>
      <ProblemView problem={refused} />
      <button type="submit">{button}</button>
    </form>
  )
}

/** A destructive action asks once more, naming what it destroys. */
export function ConfirmButton({ label, confirmLabel, onConfirm }: { label: string; confirmLabel: string; onConfirm: () => void }) {
  const [asking, setAsking] = useState(false)
  if (!asking)
    return (
      <button type="button" onClick={() => setAsking(true)}>
        {label}
      </button>
    )
  return (
    <>
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false)
          onConfirm()
        }}
      >
        {confirmLabel}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </>
  )
}
