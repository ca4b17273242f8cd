// Option values checked as commander parses them: a bad one is a usage error naming the option.
import { InvalidArgumentError } from 'commander'
import { isUuid } from '../ids.js'

/** A whole number within [min, max]. */
export function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value)
    if (!/^\d+$/.test(value) || number < min || number > max) throw new InvalidArgumentError(`it must be a whole number from ${min} to ${max}`)
    return number
  }
}

/** One of `allowed` whole numbers. */
export function oneOf(allowed: number[]): (value: string) => number {
  return (value) => {
    if (!allowed.map(String).includes(value)) throw new InvalidArgumentError(`it must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`)
    return Number(value)
  }
}

/** A number within [min, max]. */
export function numberIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value)
    if (value.trim() === '' || !(number >= min && number <= max)) throw new InvalidArgumentError(`it must be a number from ${min} to ${max}`)
    return number
  }
}

/** A comma-separated list of numbers within [min, max]. */
export function numberList(min: number, max: number): (value: string) => number[] {
  const each = numberIn(min, max)
  return (value) => value.split(',').filter(Boolean).map(each)
}

/** An id (a UUID) of `what`. */
export function uuidOf(what: string): (value: string) => string {
  return (value) => {
    if (!isUuid(value)) throw new InvalidArgumentError(`it must be ${what} id (a UUID)`)
    return value
  }
}
