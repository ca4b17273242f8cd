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

/** A number in (0, 1]: a score or a rate that must be above zero. */
export function positiveFraction(value: string): number {
  const number = Number(value)
  if (value.trim() === '' || !(number > 0 && number <= 1)) throw new InvalidArgumentError('it must be a number in (0, 1]')
  return number
}

/** A comma-separated list of numbers in (0, 1]. */
export const positiveFractions = (value: string): number[] => value.split(',').filter(Boolean).map(positiveFraction)

/** An id (a UUID) of `what`. */
export function uuidOf(what: string): (value: string) => string {
  return (value) => {
    if (!isUuid(value)) throw new InvalidArgumentError(`it must be ${what} id (a UUID)`)
    return value
  }
}
